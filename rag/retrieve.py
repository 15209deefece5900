"""Question to hits: BM25 and dense search fused by reciprocal rank, one hit per paper.

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
import uuid
from dataclasses import astuple, dataclass, field, fields
from pathlib import Path
from typing import Any

import numpy as np

from .embedder import Embedder
from .errors import NoIndexError
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


def tokenize(text: str) -> list[str]:
    """Lower-cased, stemmed word tokens without English stopwords (both sides use this)."""
    from bm25s.stopwords import STOPWORDS_EN

    stem = _stemmer()
    words = [w for w in _TOKEN.findall(text.lower()) if w not in STOPWORDS_EN]
    return stem.stemWords(words) if stem else words


_STEMMER: Any = None


def _stemmer() -> Any:
    global _STEMMER
    if _STEMMER is None:
        import Stemmer

        _STEMMER = Stemmer.Stemmer("english")
    return _STEMMER


@dataclass
class Corpus:
    """A snapshot of the index in memory: its papers, its chunks and their BM25 index."""

    version: str
    papers: dict[str, Paper]
    chunk_ids: list[str]
    chunk_papers: list[str]
    chunk_texts: list[str]
    bm25: Any = field(default=None, repr=False)
    chunk_index: dict[str, int] = field(default_factory=dict, repr=False)

    def __post_init__(self) -> None:
        self.chunk_index = {cid: i for i, cid in enumerate(self.chunk_ids)}

    @property
    def venues(self) -> list[str]:
        return sorted({p.venue for p in self.papers.values() if p.venue})

    @property
    def years(self) -> list[int]:
        return sorted({p.year for p in self.papers.values() if p.year is not None})

    def lexical(self, query: str, n: int, mask: np.ndarray | None) -> list[tuple[int, float]]:
        """Best chunks for a query as (chunk index, BM25 score), best first."""
        vocab = self.bm25.vocab_dict
        tokens = [t for t in tokenize(query) if t in vocab]
        if not tokens or not self.chunk_ids:
            return []
        scores = self.bm25.get_scores(tokens)
        if mask is not None:
            scores = scores * mask
        n = min(n, len(scores))
        top = np.argpartition(-scores, n - 1)[:n]
        top = top[np.argsort(-scores[top])]
        return [(int(i), float(scores[i])) for i in top if scores[i] > 0]


def build_corpus(store: PaperStore, version: str) -> Corpus:
    import bm25s

    chunks = sorted(store.iter_chunks(), key=lambda c: c.chunk_id)
    if not chunks:
        raise NoIndexError(
            f"The index in {describe(store.settings)} holds no papers. Run `rag ingest PATH`."
        )
    papers = {
        c.meta["paper_id"]: paper_from_metadata(c.meta, c.meta.get("abstract", ""))
        for c in chunks
        if c.meta.get("chunk") == 0
    }
    texts = [f"{c.meta.get('title', '')}. {c.text}" for c in chunks]
    bm25 = bm25s.BM25()
    bm25.index([tokenize(t) for t in texts], show_progress=False)
    return Corpus(
        version=version,
        papers=papers,
        chunk_ids=[c.chunk_id for c in chunks],
        chunk_papers=[c.meta["paper_id"] for c in chunks],
        chunk_texts=[c.text for c in chunks],
        bm25=bm25,
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


_CACHE_FORMAT = (2, tuple(f.name for f in fields(Paper)))


def _read_cache(path: Path, version: str) -> Corpus | None:
    """A cached snapshot: papers and chunks pickled as plain tuples, the BM25 index as
    bm25s saves it (memory-mapped, so a fresh process starts in a fraction of a second)."""
    try:
        with (path / "corpus.pkl").open("rb") as f:
            data = pickle.load(f)
        if data["format"] != _CACHE_FORMAT or data["version"] != version:
            return None
        import bm25s

        bm25 = bm25s.BM25.load(str(path / "bm25"), mmap=True)
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
    )


def _write_cache(folder: Path, corpus: Corpus) -> None:
    """Write into a private folder, then rename it into place: readers see all or nothing."""
    tmp = folder / f".tmp-{uuid.uuid4().hex}"
    try:
        (tmp / "bm25").mkdir(parents=True)
        corpus.bm25.save(str(tmp / "bm25"))
        data = {
            "format": _CACHE_FORMAT,
            "version": corpus.version,
            "papers": [astuple(p) for p in corpus.papers.values()],
            "chunk_ids": corpus.chunk_ids,
            "chunk_papers": corpus.chunk_papers,
            "chunk_texts": corpus.chunk_texts,
        }
        with (tmp / "corpus.pkl").open("wb") as f:
            pickle.dump(data, f, protocol=pickle.HIGHEST_PROTOCOL)
        tmp.rename(folder / corpus.version)
    except OSError:
        pass  # the cache only saves time; another process may have written this version
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    for old in folder.iterdir() if folder.is_dir() else ():
        if old.name != corpus.version and not old.name.startswith(".tmp-"):
            shutil.rmtree(old, ignore_errors=True)  # older versions are never read again


class Retriever:
    """Hybrid search over one index; reloads its snapshot when the index changes."""

    def __init__(self, store: PaperStore, embedder: Embedder, settings: RetrievalSettings) -> None:
        self.store = store
        self.embedder = embedder
        self.settings = settings
        self._corpus: Corpus | None = None
        self._lock = threading.Lock()

    @property
    def corpus(self) -> Corpus:
        """The snapshot at the index's current version (checked on every call)."""
        with self._lock:
            version = self.store.version()
            if self._corpus is None or self._corpus.version != version:
                self._corpus = load_corpus(self.store, version)
            return self._corpus

    def search(
        self, query: str, k: int | None = None, filters: Filters | None = None, mode: str = "hybrid"
    ) -> list[Hit]:
        """One hit per paper, best first. ``mode`` is "hybrid", "bm25" or "dense"."""
        corpus = self.corpus
        k = k or self.settings.k
        filters = filters or Filters()
        allowed = self._allowed(corpus, filters)
        n = self.settings.candidates
        lexical: list[tuple[int, float]] = []
        dense: list[tuple[int, float]] = []
        if mode in ("hybrid", "bm25"):
            lexical = corpus.lexical(query, n, self._mask(corpus, allowed))
        if mode in ("hybrid", "dense") or mode == "hybrid":
            dense = self._dense(corpus, query, n, filters, allowed)
        return self._fuse(corpus, lexical, dense, k)

    def similarity(self, query: str, paper_ids: list[str]) -> dict[str, float]:
        """Best chunk cosine similarity of the query to each given paper."""
        corpus = self.corpus
        vector = self.embedder.embed_query(query)
        where = {"paper_id": {"$in": paper_ids}}
        found = self.store.query(vector, min(len(corpus.chunk_ids), 10 * len(paper_ids)), where)
        best: dict[str, float] = {}
        for cid, sim in found:
            pid = corpus.chunk_papers[corpus.chunk_index[cid]] if cid in corpus.chunk_index else ""
            best[pid] = max(best.get(pid, -1.0), sim)
        return best

    # -- the steps -------------------------------------------------------------------------
    @staticmethod
    def _allowed(corpus: Corpus, filters: Filters) -> set[str] | None:
        if not filters:
            return None
        return {pid for pid, p in corpus.papers.items() if filters.matches(p)}

    @staticmethod
    def _mask(corpus: Corpus, allowed: set[str] | None) -> np.ndarray | None:
        if allowed is None:
            return None
        return np.fromiter((p in allowed for p in corpus.chunk_papers), dtype=np.float32)

    def _dense(
        self, corpus: Corpus, query: str, n: int, filters: Filters, allowed: set[str] | None
    ) -> list[tuple[int, float]]:
        if allowed is not None and not allowed:
            return []
        where = _chroma_where(filters, allowed)
        vector = self.embedder.embed_query(query)
        found = self.store.query(vector, min(n, len(corpus.chunk_ids)), where)
        return [(corpus.chunk_index[cid], sim) for cid, sim in found if cid in corpus.chunk_index]

    def _fuse(
        self,
        corpus: Corpus,
        lexical: list[tuple[int, float]],
        dense: list[tuple[int, float]],
        k: int,
    ) -> list[Hit]:
        scores: dict[str, float] = {}
        evidence: dict[str, list[int]] = {}
        ranks: dict[str, dict[str, int]] = {}
        best_sim: dict[str, float] = {}
        for side, ranked in (("lexical", lexical), ("dense", dense)):
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


def _chroma_where(filters: Filters, allowed: set[str] | None) -> dict[str, Any] | None:
    clauses: list[dict[str, Any]] = []
    if filters.venue:
        clauses.append({"venue_norm": filters.venue.lower()})
    if filters.year_min is not None:
        clauses.append({"year": {"$gte": filters.year_min}})
    if filters.year_max is not None:
        clauses.append({"year": {"$lte": filters.year_max}})
    if (filters.author or filters.keyword) and allowed is not None:
        clauses.append({"paper_id": {"$in": sorted(allowed)}})
    if not clauses:
        return None
    return clauses[0] if len(clauses) == 1 else {"$and": clauses}
