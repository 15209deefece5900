"""A snapshot of the index in memory, and its copies on disk.

``Corpus`` holds the index's papers, its chunks, their stored vectors and their BM25
matrix, as they were at one version stamp of the index. Each ingest into a folder writes
it into that folder (``publish``: ``<index>/snapshot/<stamp>/``), so that reading the
index (search, ask, stats, topics) never opens Chroma, which writes to its folder whenever
it opens one, and works in a folder the reader may not write to. Without a published
snapshot (a Chroma server, an ingest cut short) it is built from the index and cached under
the user's cache folder. Either copy is read only under the index's current stamp, so it
stays in step with every ingest, in this process or another. The copies hold JSON and
plain numpy arrays, never pickles: a shared index folder cannot run code in its reader.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import time
import uuid
from dataclasses import astuple, dataclass, field, fields, replace
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from ..errors import NoIndexError
from ..settings import cache_dir
from ..text.chunking import searchable_text
from ..types import Paper
from . import ranking
from .lexical import LexicalIndex, query_terms, tokenize, top_chunks
from .store import WRITING, PaperStore, describe, paper_from_metadata


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
    origin: str = ""  # the published snapshot it was read from, if any

    def __post_init__(self) -> None:
        self.chunk_index = {cid: i for i, cid in enumerate(self.chunk_ids)}

    @cached_property
    def venues(self) -> list[str]:
        return sorted({p.venue for p in self.papers.values() if p.venue})

    @cached_property
    def titles_naming_filters(self) -> list[str]:
        """Titles holding a year or an indexed venue's name, which a question quoting them
        does not mean as a filter (``rag.answer.question.parse_filters``)."""
        venues = "|".join(re.escape(v) for v in self.venues)
        holds = re.compile(rf"\b(?:19[5-9]\d|20\d\d{'|' + venues if venues else ''})\b", re.I)
        return [p.title for p in self.papers.values() if holds.search(p.title)]

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
    titles = [c.meta.get("title", "") for c in chunks]
    words = [tokenize(searchable_text(t, c.text)) for t, c in zip(titles, chunks, strict=True)]
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
        title_lengths=np.array([len(tokenize(t)) for t in titles], dtype=np.int32),
    )


def _cache_path(store: PaperStore) -> Path:
    where = describe(store.settings)
    if not store.settings.chroma_url:
        where = str(Path(store.settings.index_dir).resolve())
    key = hashlib.sha1(f"{where}|{store.settings.collection}".encode()).hexdigest()[:16]
    return cache_dir() / "corpus" / key


SNAPSHOT_DIR = "snapshot"  # in an index folder: the snapshot its last ingest published


def _published_path(store: PaperStore) -> Path | None:
    return None if store.settings.chroma_url else Path(store.settings.index_dir) / SNAPSHOT_DIR


def load_corpus(
    store: PaperStore, version: str | None = None, current: Corpus | None = None
) -> Corpus:
    """The corpus at the index's current version: as published in the index folder, else
    from the user's cache, else built from the index (and cached).

    A snapshot is cached only if the index kept its version while it was read and that
    version is not one of an unfinished write (``WRITING``): another process can then never
    load a snapshot that misses part of a write.
    """
    version = version or store.version()
    if current is not None and current.origin == version:
        # what this reader served while the ingest wrote is that ingest's own snapshot
        return replace(current, version=version)
    for folder in (_published_path(store), _cache_path(store)):
        corpus = None if folder is None else _read_cache(folder / version, version)
        if corpus is not None:
            return corpus
    if version.startswith(WRITING) and (last := _last_published(store, current)) is not None:
        # an ingest is under way: the index as its last one left it, not half of this one
        # (and no Chroma client, with its copy of the vector index, in a reading process)
        return replace(last, version=version)
    corpus = build_corpus(store, version)
    if not version.startswith(WRITING) and store.version() == version:
        _write_cache(_cache_path(store), corpus)
    return corpus


def _last_published(store: PaperStore, current: Corpus | None = None) -> Corpus | None:
    """The snapshot the last finished ingest published in the index folder, if any:
    ``current`` when that is what it was read from (a server does not read it again)."""
    folder = _published_path(store)
    if folder is None or not folder.is_dir():
        return None
    for path in sorted(folder.iterdir(), key=lambda p: p.stat().st_mtime, reverse=True):
        if not path.name.startswith(".tmp-") and not path.name.startswith(WRITING):
            if current is not None and current.origin == path.name:
                return current
            if (corpus := _read_cache(path, path.name)) is not None:
                return corpus
    return None


def publish(store: PaperStore, version: str | None = None) -> None:
    """Write the index's snapshot where every reader finds it: into the index folder (a
    Chroma server's: the user's cache). Nothing to do when it is there.

    ``version``: the stamp the index is about to carry. An ingest publishes under it before
    writing it, so no reader ever sees a version whose snapshot is not there yet.
    """
    current = store.version()
    version = version or current
    folder = _published_path(store) or _cache_path(store)
    if version.startswith(WRITING) or _readable(folder / version):
        return
    try:
        corpus = build_corpus(store, version)
    except NoIndexError:  # every paper removed: nothing to search
        return
    if store.version() == current:  # nobody else wrote meanwhile
        _write_cache(folder, corpus)


_CACHE_FORMAT = [8, [f.name for f in fields(Paper)]]
_DATA = "corpus.jsonl"
_HEAD = json.dumps({"format": _CACHE_FORMAT}, separators=(",", ":"))[:-1].encode()


def _readable(path: Path) -> bool:
    """Whether a snapshot is there in the format this code reads (its first bytes)."""
    try:
        with (path / _DATA).open("rb") as f:
            return f.read(len(_HEAD)) == _HEAD
    except OSError:
        return False


def _read_cache(path: Path, version: str) -> Corpus | None:
    """A stored snapshot: papers and chunks as JSON lines, the BM25 matrix and the chunk
    vectors as numpy arrays, memory-mapped (a fresh process loads 23k papers in about a
    second). Read line by line, so reading holds little more than the corpus it makes."""
    try:
        with (path / _DATA).open("rb") as f:
            head = json.loads(f.readline())
            if head["format"] != _CACHE_FORMAT or head["version"] != version:
                return None
            vocab = json.loads(f.readline())
            papers = [_paper(json.loads(f.readline())) for _ in range(head["papers"])]
            chunks = [json.loads(f.readline()) for _ in range(head["chunks"])]
        bm25 = LexicalIndex.load(path, vocab, len(chunks))
        vectors = np.asarray(np.load(path / "vectors.npy", mmap_mode="r"))
        tokens = np.asarray(np.load(path / "tokens.npy", mmap_mode="r"))
        token_starts = np.load(path / "token_starts.npy")
        title_lengths = np.load(path / "title_lengths.npy")
        # each chunk names its paper by place, and a chunk that is its paper's whole
        # abstract (most of them) has no text of its own: one string, not a copy per chunk
        owners = [papers[place] for _, place, _ in chunks]
    except Exception:  # absent, half-deleted, or written by another version of the code
        return None
    return Corpus(
        version=version,
        papers={p.paper_id: p for p in papers},
        chunk_ids=[cid for cid, _, _ in chunks],
        chunk_papers=[p.paper_id for p in owners],
        chunk_texts=[
            text if text is not None else p.abstract
            for (_, _, text), p in zip(chunks, owners, strict=True)
        ],
        bm25=bm25,
        vectors=vectors,
        tokens=tokens,
        token_starts=token_starts,
        title_lengths=title_lengths,
        origin=version,
    )


def _paper(row: list[Any]) -> Paper:
    """A paper from its JSON row (lists back to the tuples ``Paper`` holds)."""
    values: list[Any] = [tuple(v) if isinstance(v, list) else v for v in row]
    return Paper(*values)


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
        place = {pid: i for i, pid in enumerate(corpus.papers)}
        head = {
            "format": _CACHE_FORMAT,
            "version": corpus.version,
            "papers": len(corpus.papers),
            "chunks": len(corpus.chunk_ids),
        }
        chunks = (
            [cid, place[pid], None if text == corpus.papers[pid].abstract else text]
            for cid, pid, text in zip(
                corpus.chunk_ids, corpus.chunk_papers, corpus.chunk_texts, strict=True
            )
        )
        lines = [head, corpus.bm25.vocab, *map(astuple, corpus.papers.values()), *chunks]
        with (tmp / _DATA).open("w", encoding="utf-8") as f:
            for line in lines:
                f.write(json.dumps(line, ensure_ascii=False, separators=(",", ":")) + "\n")
        target, stale = folder / corpus.version, folder / f".tmp-{uuid.uuid4().hex}"
        if target.exists():  # written by another version of the code: unreadable here
            target.rename(stale)
            shutil.rmtree(stale, ignore_errors=True)
        tmp.rename(target)
    except (OSError, KeyError):  # KeyError: a chunk without its paper's first chunk
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
