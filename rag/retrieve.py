"""Question to hits: BM25 and exact dense search, fused, one hit per paper.

The fusion is learned (``rag.ranking``): every candidate either side finds is described by
both scores and ranks and by how it matches the question's words, and scored by a small
model trained on training queries. Words that the stemmer keeps apart but a question and
an abstract use for one thing (``EQUIVALENT``: defend and defense) count as one on the
lexical side.

Both sides see the same filters. The lexical side is built from the index itself and
cached on disk under the index's version stamp, so it stays in step with every ingest,
in this process or another, and a fresh process loads it instead of rebuilding it.
"""

from __future__ import annotations

import hashlib
import pickle
import re
import shutil
import threading
import time
import uuid
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import astuple, dataclass, field, fields
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import numpy as np

from . import ranking
from .embedder import Embedder
from .errors import EmbedderMismatchError, NoIndexError
from .settings import RetrievalSettings, cache_dir
from .store import WRITING, PaperStore, describe, paper_from_metadata
from .types import Hit, Paper

_TOKEN = re.compile(r"(?u)\b\w\w+\b")


@dataclass(frozen=True)
class Filters:
    """Metadata a hit must match. Text matches ignore case; authors and keywords by substring."""

    venue: str | None = None
    year_min: int | None = None
    year_max: int | None = None
    author: str | None = None
    keyword: str | None = None

    def __bool__(self) -> bool:
        return any(
            v is not None
            for v in (self.venue, self.year_min, self.year_max, self.author, self.keyword)
        )

    def matches(self, paper: Paper) -> bool:
        if self.venue and paper.venue.lower() != self.venue.lower():
            return False
        if self.year_min is not None and (paper.year is None or paper.year < self.year_min):
            return False
        if self.year_max is not None and (paper.year is None or paper.year > self.year_max):
            return False
        if self.author and not any(self.author.lower() in a.lower() for a in paper.authors):
            return False
        return not self.keyword or any(self.keyword.lower() in k.lower() for k in paper.keywords)

    def describe(self) -> str:
        parts = []
        if self.venue:
            parts.append(self.venue)
        if self.year_min is not None and self.year_min == self.year_max:
            parts.append(str(self.year_min))
        elif self.year_min is not None or self.year_max is not None:
            parts.append(f"{self.year_min or '…'}–{self.year_max or '…'}")
        if self.author:
            parts.append(f"author {self.author}")
        if self.keyword:
            parts.append(f"keyword {self.keyword}")
        return ", ".join(parts)


# Lucene's English stopwords, bm25s's STOPWORDS_EN: named here so that searching never
# imports bm25s (0.7 s with numba and scipy); only building the BM25 index does.
STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-cased, stemmed word tokens without English stopwords (both sides use this)."""
    stem = _stemmer()
    words = [w for w in _TOKEN.findall(text.lower()) if w not in STOPWORDS]
    return stem.stemWords(words) if stem else words


# Forms a question and an abstract use for one thing that stemming keeps apart: a verb and
# its noun, British and American spellings, and phrases of the field that name one thing.
# A phrase's forms have as many words and differ word by word.
EQUIVALENT = (
    "defend|defense|defence", "explain|explanation", "reduce|reduction",
    "describe|description", "decide|decision", "solve|solution", "analyze|analyse|analysis",
    "prove|proof", "compose|composition", "perceive|perception", "assume|assumption",
    "generalize|generalise", "optimize|optimise", "regularize|regularise",
    "summarize|summarise|summary", "behavior|behaviour", "neighbor|neighbour",
    "color|colour", "private|privacy", "represent|representation", "stable|stability",
    "sparse|sparsity", "accurate|accuracy", "uncertain|uncertainty",
    "adversarial images|adversarial examples|adversarial inputs",
)  # fmt: skip


def query_terms(text: str) -> list[tuple[str, ...]]:
    """The question's stemmed words in order, each with its equivalent stems after it."""
    words = tokenize(text)
    same, phrases = _equivalents()
    terms = [[w, *sorted(same.get(w, ()))] for w in words]
    for forms in phrases:
        for form in forms:
            for i in range(len(words) - len(form) + 1):
                if tuple(words[i : i + len(form)]) != form:
                    continue
                for other in forms:
                    for j, (mine, theirs) in enumerate(zip(form, other, strict=True)):
                        if theirs != mine and theirs not in terms[i + j]:
                            terms[i + j].append(theirs)
    return [tuple(t) for t in terms]


@cache
def _equivalents() -> tuple[dict[str, set[str]], list[list[tuple[str, ...]]]]:
    """EQUIVALENT stemmed: each word's equivalent stems, and the phrase families."""
    same: dict[str, set[str]] = {}
    phrases = []
    for family in EQUIVALENT:
        forms = [tuple(tokenize(form)) for form in family.split("|")]
        if all(len(f) == 1 for f in forms):
            for (form,) in forms:
                same.setdefault(form, set()).update(f for (f,) in forms if f != form)
        else:
            phrases.append(forms)
    return same, phrases


_STEMMER: Any = None


def _stemmer() -> Any:
    global _STEMMER
    if _STEMMER is None:
        import Stemmer

        _STEMMER = Stemmer.Stemmer("english")
    return _STEMMER


@dataclass(frozen=True)
class LexicalIndex:
    """BM25 over the chunks: every word's score in every chunk, as bm25s computes it, kept as
    a sparse matrix by word. A query's scores are the sums of its words' columns, so a process
    that only searches needs numpy, not bm25s."""

    vocab: dict[str, int]
    data: np.ndarray  # the scores, word by word
    indices: np.ndarray  # the chunk of each score
    indptr: np.ndarray  # where each word's scores start in ``data``
    num_chunks: int

    @classmethod
    def build(cls, chunk_words: list[list[str]]) -> LexicalIndex:
        import bm25s

        bm25 = bm25s.BM25()  # Lucene's BM25: no score for words a chunk lacks
        bm25.index(chunk_words, show_progress=False)
        m = bm25.scores
        return cls(dict(bm25.vocab_dict), m["data"], m["indices"], m["indptr"], m["num_docs"])

    def scores(self, words: list[str] | list[tuple[str, ...]]) -> np.ndarray | None:
        """Every chunk's BM25 score for the words; None when none of them is indexed. A word
        given as a tuple of equivalent forms scores each chunk by its best form.

        ``bm25s.get_scores`` without its ``np.add.at`` (~20 ms for a long question over 30k
        chunks): a word's column names each chunk once, so an indexed ``+=`` adds the same
        float32 values in the same order, and the scores are identical.
        """
        terms = [[self.vocab[f] for f in _forms(w) if f in self.vocab] for w in words]
        terms = [t for t in terms if t]
        if not terms or not self.num_chunks:
            return None
        scores = np.zeros(self.num_chunks, dtype=self.data.dtype)
        for ids in terms:
            if len(ids) == 1:
                chunks, values = self._column(ids[0])
                scores[chunks] += values
                continue
            best = np.zeros_like(scores)
            for word in ids:
                chunks, values = self._column(word)
                best[chunks] = np.maximum(best[chunks], values)
            scores += best
        return scores

    def _column(self, word: int) -> tuple[np.ndarray, np.ndarray]:
        start, end = self.indptr[word], self.indptr[word + 1]
        return self.indices[start:end], self.data[start:end]

    def idf(self, word: int) -> float:
        """BM25's inverse document frequency of a word id, over the chunks."""
        df = int(self.indptr[word + 1] - self.indptr[word])
        return float(np.log(1 + (self.num_chunks - df + 0.5) / (df + 0.5)))

    def save(self, folder: Path) -> None:
        for name in ("data", "indices", "indptr"):
            np.save(folder / f"bm25_{name}.npy", getattr(self, name))

    @classmethod
    def load(cls, folder: Path, vocab: dict[str, int], num_chunks: int) -> LexicalIndex:
        arrays = {  # plain arrays over the mapped files: np.memmap slices cost more
            n: np.asarray(np.load(folder / f"bm25_{n}.npy", mmap_mode="r"))
            for n in ("data", "indices", "indptr")
        }
        return cls(vocab, num_chunks=num_chunks, **arrays)


@dataclass
class Corpus:
    """A snapshot of the index in memory: its papers, its chunks, their stored vectors and
    their BM25 index."""

    version: str
    papers: dict[str, Paper]
    chunk_ids: list[str]
    chunk_papers: list[str]
    chunk_texts: list[str]
    bm25: LexicalIndex = field(repr=False)
    vectors: np.ndarray = field(repr=False)  # one unit row per chunk, as Chroma stores them
    # every chunk's word ids as BM25 saw them (its paper's title, then its text), in a row;
    # where each chunk's words start (then the end); how many of them are the title's
    tokens: np.ndarray = field(repr=False)
    token_starts: np.ndarray = field(repr=False)
    title_lengths: np.ndarray = field(repr=False)
    chunk_index: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.chunk_index = {cid: i for i, cid in enumerate(self.chunk_ids)}

    @cached_property
    def venues(self) -> list[str]:
        return sorted({p.venue for p in self.papers.values() if p.venue})

    @cached_property
    def years(self) -> list[int]:
        return sorted({p.year for p in self.papers.values() if p.year is not None})

    def lexical_scores(self, query: str, mask: np.ndarray | None) -> np.ndarray | None:
        """BM25 score of every chunk (None when no query word is in the vocabulary)."""
        scores = self.bm25.scores(query_terms(query))
        return scores * mask if scores is not None and mask is not None else scores

    def query_terms(self, query: str) -> ranking.QueryTerms:
        """The question's indexed terms as vocabulary ids, for ``ranking.features``."""
        vocab, bm25 = self.bm25.vocab, self.bm25
        terms = query_terms(query)
        ids: dict[str, tuple[int, ...]] = {}
        for forms in terms:
            known = tuple(vocab[f] for f in forms if f in vocab)
            if known and forms[0] not in ids:
                ids[forms[0]] = known
        names = list(ids)
        order = tuple(names.index(f[0]) for f in terms if f[0] in ids)
        return ranking.QueryTerms(
            ids=tuple(np.array(t, dtype=self.tokens.dtype) for t in ids.values()),
            idf=np.array([max(bm25.idf(i) for i in t) for t in ids.values()]),
            order=order,
        )

    def lexical(self, query: str, n: int, mask: np.ndarray | None) -> list[tuple[int, float]]:
        """Best chunks for a query as (chunk index, BM25 score), best first."""
        return top_chunks(self.lexical_scores(query, mask), n)

    def words(self, chunks: np.ndarray) -> ranking.Words:
        """The given chunks' words, for ``ranking.features``."""
        return ranking.Words.of(self.tokens, self.token_starts, self.title_lengths, chunks)

    @cached_property
    def paper_chunks(self) -> dict[str, list[int]]:
        chunks: dict[str, list[int]] = {}
        for i, pid in enumerate(self.chunk_papers):
            chunks.setdefault(pid, []).append(i)
        return chunks

    # per-paper columns, for filtering without a Python loop over every paper
    @cached_property
    def paper_ids(self) -> list[str]:
        return list(self.papers)

    @cached_property
    def paper_venues(self) -> np.ndarray:
        return np.array([p.venue.lower() for p in self.papers.values()], dtype=str)

    @cached_property
    def paper_years(self) -> np.ndarray:
        """Each paper's year, or -1 where it has none."""
        years = [-1 if p.year is None else p.year for p in self.papers.values()]
        return np.array(years, dtype=np.int64)

    @cached_property
    def chunk_paper_rows(self) -> np.ndarray:
        """For each chunk, its paper's position in ``paper_ids``."""
        row = {pid: i for i, pid in enumerate(self.paper_ids)}
        return np.array([row[pid] for pid in self.chunk_papers], dtype=np.int64)


def _forms(word: str | tuple[str, ...]) -> tuple[str, ...]:
    return (word,) if isinstance(word, str) else word


def top_chunks(scores: np.ndarray | None, n: int) -> list[tuple[int, float]]:
    """The n best-scoring chunks as (chunk index, score), best first; none scoring 0."""
    if scores is None:
        return []
    n = min(n, len(scores))
    top = np.argpartition(-scores, n - 1)[:n]
    top = top[np.argsort(-scores[top])]
    return [(int(i), float(scores[i])) for i in top if scores[i] > 0]


def _one_blas_thread() -> None:
    """Run numpy's BLAS on one thread: the products here are small or bound by memory (the
    exact dense search over 29k chunks took 1.5 ms on one thread, 8.5 ms on both cores of a
    busy machine), and OpenBLAS's spinning threads slow the rest; concurrent requests use the
    other cores."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # without it, BLAS's default
        return
    threadpool_limits(1, user_api="blas")


def dense_top(
    vectors: np.ndarray, query: np.ndarray, n: int, mask: np.ndarray | None
) -> list[tuple[int, float]]:
    """The n chunks closest to the query vector as (chunk index, cosine similarity), best
    first; exact, over every chunk the mask (1 or 0 per chunk) lets through."""
    if not len(vectors) or (mask is not None and not mask.any()):
        return []
    sims = vectors @ query
    if mask is not None:
        sims = np.where(mask > 0, sims, -np.inf)
    n = min(n, len(sims))
    top = np.argpartition(-sims, n - 1)[:n]
    top = top[np.argsort(-sims[top], kind="stable")]
    return [(int(i), float(sims[i])) for i in top if sims[i] > -np.inf]


def build_corpus(store: PaperStore, version: str) -> Corpus:
    chunks = sorted(store.iter_chunks(with_vectors=True), key=lambda c: c.chunk_id)
    if not chunks:
        raise NoIndexError(
            f"The index in {describe(store.settings)} holds no papers. Run `rag ingest PATH`."
        )
    papers = {
        c.meta["paper_id"]: paper_from_metadata(c.meta, c.meta.get("abstract", ""))
        for c in chunks
        if c.meta.get("chunk") == 0
    }
    titles = [tokenize(c.meta.get("title", "")) for c in chunks]
    words = [title + tokenize(c.text) for title, c in zip(titles, chunks, strict=True)]
    bm25 = LexicalIndex.build(words)
    return Corpus(
        version=version,
        papers=papers,
        chunk_ids=[c.chunk_id for c in chunks],
        chunk_papers=[c.meta["paper_id"] for c in chunks],
        chunk_texts=[c.text for c in chunks],
        bm25=bm25,
        vectors=np.stack([c.vector for c in chunks if c.vector is not None]),
        tokens=np.array([bm25.vocab[w] for ws in words for w in ws], dtype=np.int32),
        token_starts=np.cumsum([0, *map(len, words)], dtype=np.int64),
        title_lengths=np.array([len(t) for t in titles], dtype=np.int32),
    )


def _cache_path(store: PaperStore) -> Path:
    where = describe(store.settings)
    if not store.settings.chroma_url:
        where = str(Path(store.settings.index_dir).resolve())
    key = hashlib.sha1(f"{where}|{store.settings.collection}".encode()).hexdigest()[:16]
    return cache_dir() / "corpus" / key


def load_corpus(store: PaperStore, version: str | None = None) -> Corpus:
    """The corpus at the index's current version: from the disk cache, else built.

    A snapshot is cached only if the index kept its version while it was read and that
    version is not one of an unfinished write (``WRITING``): another process can then never
    load a snapshot that misses part of a write.
    """
    version = version or store.version()
    folder = _cache_path(store)
    corpus = _read_cache(folder / version, version)
    if corpus is None:
        corpus = build_corpus(store, version)
        if not version.startswith(WRITING) and store.version() == version:
            _write_cache(folder, corpus)
    return corpus


_CACHE_FORMAT = (6, tuple(f.name for f in fields(Paper)))


def _read_cache(path: Path, version: str) -> Corpus | None:
    """A cached snapshot: papers and chunks pickled as plain tuples, the BM25 matrix and the
    chunk vectors as numpy arrays, memory-mapped (a fresh process loads 23k papers in ~0.4 s)."""
    try:
        with (path / "corpus.pkl").open("rb") as f:
            data = pickle.load(f)
        if data["format"] != _CACHE_FORMAT or data["version"] != version:
            return None
        bm25 = LexicalIndex.load(path, data["vocab"], len(data["chunk_ids"]))
        vectors = np.asarray(np.load(path / "vectors.npy", mmap_mode="r"))
        tokens = np.asarray(np.load(path / "tokens.npy", mmap_mode="r"))
        token_starts = np.load(path / "token_starts.npy")
        title_lengths = np.load(path / "title_lengths.npy")
    except Exception:  # absent, half-deleted, or written by another version of the code
        return None
    papers = [Paper(*row) for row in data["papers"]]
    return Corpus(
        version=version,
        papers={p.paper_id: p for p in papers},
        chunk_ids=data["chunk_ids"],
        chunk_papers=data["chunk_papers"],
        chunk_texts=data["chunk_texts"],
        bm25=bm25,
        vectors=vectors,
        tokens=tokens,
        token_starts=token_starts,
        title_lengths=title_lengths,
    )


_ABANDONED_AFTER = 3600.0  # seconds: no process takes this long to write a snapshot


def _write_cache(folder: Path, corpus: Corpus) -> None:
    """Write into a private folder, then rename it into place: readers see all or nothing."""
    tmp = folder / f".tmp-{uuid.uuid4().hex}"
    try:
        tmp.mkdir(parents=True)
        corpus.bm25.save(tmp)
        np.save(tmp / "vectors.npy", np.asarray(corpus.vectors, dtype=np.float32))
        np.save(tmp / "tokens.npy", corpus.tokens)
        np.save(tmp / "token_starts.npy", corpus.token_starts)
        np.save(tmp / "title_lengths.npy", corpus.title_lengths)
        data = {
            "format": _CACHE_FORMAT,
            "version": corpus.version,
            "papers": [astuple(p) for p in corpus.papers.values()],
            "chunk_ids": corpus.chunk_ids,
            "chunk_papers": corpus.chunk_papers,
            "chunk_texts": corpus.chunk_texts,
            "vocab": corpus.bm25.vocab,
        }
        with (tmp / "corpus.pkl").open("wb") as f:
            pickle.dump(data, f, protocol=pickle.HIGHEST_PROTOCOL)
        target, stale = folder / corpus.version, folder / f".tmp-{uuid.uuid4().hex}"
        if target.exists():  # written by another version of the code: unreadable here
            target.rename(stale)
            shutil.rmtree(stale, ignore_errors=True)
        tmp.rename(target)
    except OSError:
        pass  # the cache only saves time; another process may have written this version
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for old in folder.iterdir() if folder.is_dir() else ():
        if old.name.startswith(".tmp-"):  # being written by another process, unless stale
            if time.time() - old.stat().st_mtime > _ABANDONED_AFTER:  # left by a killed one
                shutil.rmtree(old, ignore_errors=True)
        elif old.name != corpus.version:
            if old.is_dir():  # older versions, and what other versions of the code wrote
                shutil.rmtree(old, ignore_errors=True)
            else:
                old.unlink(missing_ok=True)


@dataclass(frozen=True)
class Candidates:
    """The papers either side found, with their best chunk's BM25 score and cosine, and
    their ``ranking.FEATURES`` (one row per paper)."""

    paper_ids: list[str]
    lexical: np.ndarray
    dense: np.ndarray
    features: np.ndarray


def fuse_scores(lexical: np.ndarray, dense: np.ndarray, lexical_weight: float) -> np.ndarray:
    """Score fusion: BM25 over its best candidate, cosine min-max over the candidates, mixed.

    Measured against other normalisations (both sides min-max, z-scores, a theoretical
    minimum for the cosine) and a per-question weight on four query sets; none beat this on
    all of them (``bench/fusion.py`` sweeps the weight).
    """
    lex = lexical / lexical.max() if lexical.max() > 0 else lexical * 0
    spread = dense.max() - dense.min()
    den = (dense - dense.min()) / spread if spread > 0 else dense * 0 + 1
    fused: np.ndarray = lexical_weight * lex + (1 - lexical_weight) * den
    return fused


@dataclass(frozen=True)
class FirstStage:
    """Each side's best chunks (``settings.candidates`` of them) as (chunk row, score), with
    every chunk's BM25 score and the query's vector where that side ran."""

    corpus: Corpus
    lexical: list[tuple[int, float]]
    dense: list[tuple[int, float]]
    bm25: np.ndarray | None
    vector: np.ndarray | None

    @property
    def chunks(self) -> list[tuple[int, float]]:
        return [*self.dense, *self.lexical]

    def evidence(self, pid: str) -> tuple[str, ...]:
        """The paper's best two chunks: those the sides found, else its first ones."""
        corpus = self.corpus
        found = [c for c, _ in self.chunks if corpus.chunk_papers[c] == pid]
        chunks = list(dict.fromkeys(found)) or corpus.paper_chunks[pid]
        return tuple(corpus.chunk_texts[i] for i in chunks[:2])


_QUERY_POOL = ThreadPoolExecutor(2, thread_name_prefix="rag-query")


class Retriever:
    """Hybrid search over one index; reloads its snapshot when the index changes.

    The dense side is exact: the question's cosine to every chunk vector of the snapshot
    (memory-mapped; ~5 ms for 29k chunks). Chroma's approximate index is not asked, so a
    chunk is found whatever that index holds in this process (chroma-core/chroma #3638).
    """

    def __init__(self, store: PaperStore, embedder: Embedder, settings: RetrievalSettings) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        _one_blas_thread()
        self._corpus: Corpus | None = None
        self._mismatch: EmbedderMismatchError | None = None  # the snapshot's vectors are not ours
        self._lock = threading.Lock()

    @property
    def corpus(self) -> Corpus:
        """The snapshot at the index's current version (checked on every call)."""
        with self._lock:
            meta = self.store.metadata()
            version = str(meta.get("version", ""))
            if self._corpus is None or self._corpus.version != version:
                if self._corpus is None:  # a fresh process: the model loads meanwhile
                    # not a daemon: exiting while onnxruntime builds a session aborts
                    warm_up = self.embedder.warm_up
                    threading.Thread(target=warm_up, name="rag-warm-up").start()
                self._corpus = load_corpus(self.store, version)
                self._mismatch = None
                try:
                    self.store.check(self.embedder.provenance, meta)
                except EmbedderMismatchError as exc:
                    self._mismatch = exc
            return self._corpus

    def _vectors(self, corpus: Corpus) -> np.ndarray:
        """The snapshot's chunk vectors, if this embedder's questions can be compared with
        them (else the index's rebuild command, as an error)."""
        if self._mismatch is not None and self._corpus is corpus:
            raise self._mismatch
        return corpus.vectors

    def search(
        self,
        query: str,
        k: int | None = None,
        filters: Filters | None = None,
        mode: str = "hybrid",
        corpus: Corpus | None = None,
        embedding: Future[np.ndarray] | None = None,
    ) -> list[Hit]:
        """One hit per paper, best first. ``mode`` is "hybrid", "bm25" or "dense";
        ``corpus``: the snapshot to search, if the caller has just checked it is current;
        ``embedding``: the query's vector from ``embed_later``."""
        k = k or self.settings.k
        stage = self._first_stage(query, filters, mode, corpus, embedding)
        if mode == "hybrid" and self.settings.fusion != "rrf":
            return self._fuse_scores(stage, k, query)
        return self._fuse(stage, k)

    def candidates(self, query: str, filters: Filters | None = None) -> Candidates:
        """What fusion ranks: every candidate paper with its best chunk's BM25 score, cosine
        similarity and features (for measuring fusion settings; see bench/fusion.py)."""
        return self._candidates(self._first_stage(query, filters, "hybrid", None), query)

    def similarity(self, query: str, paper_ids: list[str]) -> dict[str, float]:
        """Best chunk cosine similarity of the query to each given paper."""
        corpus = self.corpus
        vectors = self._vectors(corpus)
        vector = self.embedder.embed_query(query)
        chunks = {p: corpus.paper_chunks.get(p, []) for p in paper_ids}
        return {p: float(np.max(vectors[c] @ vector)) for p, c in chunks.items() if c}

    def embed_later(self, query: str) -> Future[np.ndarray]:
        """The query's vector, computed on another core meanwhile."""
        return _QUERY_POOL.submit(self.embedder.embed_query, query)

    def _first_stage(
        self,
        query: str,
        filters: Filters | None,
        mode: str,
        corpus: Corpus | None,
        embedding: Future[np.ndarray] | None = None,
    ) -> FirstStage:
        if embedding is None and mode != "bm25":  # embedded while the lexical side runs
            embedding = self.embed_later(query)
        corpus = corpus or self.corpus
        filters = filters or Filters()
        allowed = self._allowed(corpus, filters)
        n = self.settings.candidates
        lexical: list[tuple[int, float]] = []
        dense: list[tuple[int, float]] = []
        bm25 = vector = None
        if mode in ("hybrid", "bm25"):
            bm25 = corpus.lexical_scores(query, self._mask(corpus, allowed))
            lexical = top_chunks(bm25, n)
        if mode in ("hybrid", "dense"):
            assert embedding is not None
            vectors = self._vectors(corpus)
            vector = embedding.result()
            dense = dense_top(vectors, vector, n, self._mask(corpus, allowed))
        return FirstStage(corpus, lexical, dense, bm25, vector)

    # -- the steps -------------------------------------------------------------------------
    @staticmethod
    def _allowed(corpus: Corpus, filters: Filters) -> np.ndarray | None:
        """Which papers (rows of ``corpus.paper_ids``) pass the filters; None: no filters."""
        if not filters:
            return None
        ok = np.ones(len(corpus.paper_ids), dtype=bool)
        if filters.venue:
            ok &= corpus.paper_venues == filters.venue.lower()
        if filters.year_min is not None:
            ok &= (corpus.paper_years >= filters.year_min) & (corpus.paper_years >= 0)
        if filters.year_max is not None:
            ok &= (corpus.paper_years <= filters.year_max) & (corpus.paper_years >= 0)
        if filters.author or filters.keyword:  # substring matches: paper by paper
            papers = corpus.papers.values()
            ok &= np.fromiter((filters.matches(p) for p in papers), dtype=bool, count=len(ok))
        return ok

    @staticmethod
    def _mask(corpus: Corpus, allowed: np.ndarray | None) -> np.ndarray | None:
        if allowed is None:
            return None
        return allowed[corpus.chunk_paper_rows].astype(np.float32)

    def _fuse_scores(self, stage: FirstStage, k: int, query: str) -> list[Hit]:
        """Both scores for every candidate paper, mixed by the learned model
        (``fusion = "learned"``) or normalised and mixed by a fixed weight (``"score"``).

        Rank fusion scores a paper that only one side found as if the other side ranked it
        last, so a paper BM25 puts first by a wide margin loses to papers both sides rank
        fifth. Here each side scores every candidate either side found (the missing cosine
        similarities come from the stored chunk vectors), so a confident side counts.
        """
        learned = self.settings.fusion == "learned"
        found = self._candidates(stage, query if learned else None)
        if not found.paper_ids:
            return []
        candidates, lex, den = found.paper_ids, found.lexical, found.dense
        if learned:
            fused = ranking.bundled_model().score(found.features)
        else:
            fused = fuse_scores(lex, den, self.settings.lexical_weight)
        order = np.argsort(-fused)[:k]
        lex_rank = {p: r for r, p in enumerate(np.array(candidates)[np.argsort(-lex)], 1)}
        den_rank = {p: r for r, p in enumerate(np.array(candidates)[np.argsort(-den)], 1)}
        return [
            Hit(
                paper=stage.corpus.papers[candidates[i]],
                score=float(fused[i]),
                evidence=stage.evidence(candidates[i]),
                lexical_rank=lex_rank[candidates[i]] if lex[i] > 0 else None,
                dense_rank=den_rank[candidates[i]],
                dense_similarity=float(den[i]),
            )
            for i in order
        ]

    @staticmethod
    def _candidates(stage: FirstStage, query: str | None) -> Candidates:
        """The candidate papers' scores, and their features when ``query`` is given."""
        corpus = stage.corpus
        found = [*stage.lexical, *stage.dense]
        papers = list(dict.fromkeys(corpus.chunk_papers[c] for c, _ in found))
        cosine = _paper_cosines(stage, papers) if papers else {}
        lexical = np.array([_best(stage.bm25, corpus.paper_chunks[p]) for p in papers])
        dense = np.array([cosine[p] for p in papers])
        features = np.zeros((len(papers), len(ranking.FEATURES)))
        if query is not None and papers:
            chunks = [corpus.paper_chunks[p] for p in papers]
            words = corpus.words(np.concatenate(chunks))
            paper_of_chunk = np.repeat(np.arange(len(papers)), [len(c) for c in chunks])
            terms = corpus.query_terms(query)
            features = ranking.features(words, paper_of_chunk, terms, lexical, dense)
        return Candidates(papers, lexical, dense, features)

    def _fuse(self, stage: FirstStage, k: int) -> list[Hit]:
        """Reciprocal-rank fusion (``retrieval.fusion = "rrf"``), and a single side's order."""
        scores: dict[str, float] = {}
        evidence: dict[str, list[int]] = {}
        ranks: dict[str, dict[str, int]] = {}
        best_sim: dict[str, float] = {}
        corpus = stage.corpus
        for side, ranked in (("lexical", stage.lexical), ("dense", stage.dense)):
            rank = 0
            for chunk, score in ranked:
                pid = corpus.chunk_papers[chunk]
                evidence.setdefault(pid, [])
                if chunk not in evidence[pid]:
                    evidence[pid].append(chunk)
                if side == "dense":
                    best_sim[pid] = max(best_sim.get(pid, -1.0), score)
                if side in ranks.setdefault(pid, {}):
                    continue  # a paper counts once per side, at its best chunk
                rank += 1
                ranks[pid][side] = rank
                scores[pid] = scores.get(pid, 0.0) + 1.0 / (self.settings.rrf_k + rank)
        best = sorted(scores, key=lambda pid: -scores[pid])[:k]
        return [
            Hit(
                paper=corpus.papers[pid],
                score=scores[pid],
                evidence=tuple(corpus.chunk_texts[i] for i in evidence[pid][:2]),
                lexical_rank=ranks[pid].get("lexical"),
                dense_rank=ranks[pid].get("dense"),
                dense_similarity=best_sim.get(pid),
            )
            for pid in best
        ]


def _paper_cosines(stage: FirstStage, papers: list[str]) -> dict[str, float]:
    """Best chunk cosine per paper: from the dense results, else from the snapshot's vectors
    of the paper's chunks."""
    corpus = stage.corpus
    best: dict[str, float] = {}
    for chunk, sim in stage.dense:
        pid = corpus.chunk_papers[chunk]
        best[pid] = max(best.get(pid, -1.0), sim)
    missing = [c for p in papers if p not in best for c in corpus.paper_chunks[p]]
    if missing and stage.vector is not None:
        for chunk, sim in zip(missing, corpus.vectors[missing] @ stage.vector, strict=True):
            pid = corpus.chunk_papers[chunk]
            best[pid] = max(best.get(pid, -1.0), float(sim))
    return {p: best.get(p, 0.0) for p in papers}


def _best(scores: np.ndarray | None, chunks: list[int]) -> float:
    return float(scores[chunks].max()) if scores is not None else 0.0
