"""Question to hits: BM25 and exact dense search over a snapshot, fused, one hit per paper.

Both sides see the same filters (``Filters``) and search the snapshot of the index
(``rag.index.snapshot``): the lexical side its BM25 matrix (``rag.index.lexical``), the
dense side its chunk vectors. Their candidates are fused into hits (``rag.retrieve.fusion``),
by the learned model unless ``retrieval.fusion`` says otherwise.
"""

from __future__ import annotations

import threading
import weakref
from concurrent.futures import Future
from dataclasses import dataclass
from typing import TypedDict, cast

import numpy as np

from ..errors import EmbedderMismatchError, InputError
from ..index.embedder import Embedder, Threads
from ..index.lexical import top_chunks
from ..index.snapshot import Corpus, load_corpus
from ..index.store import PaperStore
from ..settings import RetrievalSettings
from ..types import SEARCH_MODES, Hit, Paper, SearchMode
from . import fusion, rerank
from .fusion import Candidates, FirstStage


def search_mode(mode: str) -> SearchMode:
    """The mode, checked: one of ``SEARCH_MODES``."""
    if mode not in SEARCH_MODES:
        raise InputError(f"Unknown search mode {mode!r}. Use one of: {', '.join(SEARCH_MODES)}.")
    return cast(SearchMode, mode)


K_MAX = 50  # papers one search, answer or listing of neighbours may retrieve


def checked_k(k: object, default: int) -> int:
    """``k`` as given (None: ``default``), or an ``InputError`` saying what it may be."""
    if k is None:
        return default
    if isinstance(k, bool) or not isinstance(k, int | np.integer) or not 1 <= k <= K_MAX:
        raise InputError(f"k must be a whole number from 1 to {K_MAX}; got {k!r}.")
    return int(k)


class FilterArgs(TypedDict, total=False):
    """The filter keywords every question method takes (``Assistant.search``, ``ask``,
    ``stream``, ``find_all``, ...): ``year`` sets both ends of the range."""

    venue: str | None
    year: int | None
    year_min: int | None
    year_max: int | None
    author: str | None
    keyword: str | None


FILTER_ARGS: tuple[str, ...] = tuple(FilterArgs.__annotations__)


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
        self._corpus: Corpus | None = None
        self._mismatch: EmbedderMismatchError | None = None  # the snapshot's vectors are not ours
        self._lock = threading.Lock()
        self._questions = Threads(2, "rag-query")  # embeds questions

    @property
    def corpus(self) -> Corpus:
        """The snapshot at the index's current version (checked on every call)."""
        with self._lock:
            meta = self.store.metadata()
            version = str(meta.get("version", ""))
            current = self._corpus
            if current is None or current.version != version:
                if self._corpus is None:  # a fresh process: the model loads meanwhile
                    # not a daemon: exiting while onnxruntime builds a session aborts
                    warm_up = self.embedder.warm_up
                    threading.Thread(target=warm_up, name="rag-warm-up").start()
                loaded = load_corpus(self.store, version, current)
                if current is not None and loaded is not current:
                    release_freed_memory()  # what reading it parsed and let go
                    _release_when_freed(current)  # and the old snapshot, once searches let go
                self._corpus = current = loaded
                self._mismatch = None
                try:
                    self.store.check(self.embedder.provenance, meta)
                except EmbedderMismatchError as exc:
                    self._mismatch = exc
            return current

    def vectors(self, corpus: Corpus) -> np.ndarray:
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
        mode: SearchMode = "hybrid",
        corpus: Corpus | None = None,
        embedding: Future[np.ndarray] | None = None,
    ) -> list[Hit]:
        """One hit per paper, best first. ``mode`` is "hybrid", "bm25" or "dense";
        ``corpus``: the snapshot to search, if the caller has just checked it is current;
        ``embedding``: the query's vector from ``embed_later``."""
        k = checked_k(k, self.settings.k)
        stage = self.first_stage(query, filters, mode, corpus, embedding)
        depth = self.settings.rerank_depth if mode == "hybrid" and self.settings.rerank else 0
        n = max(k, depth)
        if mode == "hybrid" and self.settings.fusion != "rrf":
            hits = fusion.by_score(stage, n, query, self.settings)
        else:
            hits = fusion.rrf(stage, n, self.settings.rrf_k)
        return rerank.rerank(query, hits, depth)[:k] if depth else hits[:k]

    def candidates(self, query: str, filters: Filters | None = None) -> Candidates:
        """What fusion ranks: every candidate paper with its best chunk's BM25 score, cosine
        similarity and features (for measuring fusion settings; see bench/fusion.py)."""
        return fusion.candidates(self.first_stage(query, filters, "hybrid", None), query)

    def similarity(self, query: str, paper_ids: list[str]) -> dict[str, float]:
        """Best chunk cosine similarity of the query to each given paper."""
        corpus = self.corpus
        vectors = self.vectors(corpus)
        vector = self.embedder.embed_query(query)
        chunks = {p: corpus.paper_chunks.get(p, []) for p in paper_ids}
        return {p: float(np.max(vectors[c] @ vector)) for p, c in chunks.items() if c}

    def embed_later(self, query: str) -> Future[np.ndarray]:
        """The query's vector, computed on another core meanwhile."""
        return self._questions.submit(self.embedder.embed_query, query)

    def close(self) -> None:
        """Stop the threads that embed questions, once those running finish; a later search
        starts them again."""
        self._questions.close()

    def first_stage(
        self,
        query: str,
        filters: Filters | None,
        mode: SearchMode,
        corpus: Corpus | None,
        embedding: Future[np.ndarray] | None = None,
    ) -> FirstStage:
        """Each side's best ``retrieval.candidates`` chunks, before fusion (``search``'s
        arguments; bench/query.py times the steps)."""
        if embedding is None and mode != "bm25":  # embedded while the lexical side runs
            embedding = self.embed_later(query)
        corpus = corpus or self.corpus
        mask = self.mask(corpus, filters or Filters())
        n = self.settings.candidates
        lexical: list[tuple[int, float]] = []
        dense: list[tuple[int, float]] = []
        bm25 = vector = None
        if mode in ("hybrid", "bm25"):
            bm25 = corpus.lexical_scores(query, mask)
            lexical = top_chunks(bm25, n)
        if mode in ("hybrid", "dense"):
            assert embedding is not None
            vectors = self.vectors(corpus)
            vector = embedding.result()
            dense = dense_top(vectors, vector, n, mask)
        return FirstStage(corpus, lexical, dense, bm25, vector)

    def mask(self, corpus: Corpus, filters: Filters) -> np.ndarray | None:
        """Which chunks of the snapshot pass the filters, 1 or 0 each; None: no filters."""
        allowed = self._allowed(corpus, filters)
        if allowed is None:
            return None
        return allowed[corpus.chunk_paper_rows].astype(np.float32)

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


_RELEASE_AFTER_S = 10.0  # the searches that still hold the old snapshot finish meanwhile


def _release_when_freed(corpus: Corpus) -> None:
    """Give the pages a replaced snapshot held back to the system when the last search
    holding it is done (it is freed then), and again ten seconds later should anything
    keep it until a garbage collection: a serving process reads a new snapshot after every
    ingest, and glibc keeps what Python frees in its heaps (``malloc_trim``)."""
    weakref.finalize(corpus, _release_in_background)
    timer = threading.Timer(_RELEASE_AFTER_S, release_freed_memory)
    timer.daemon = True
    timer.start()


def _release_in_background() -> None:
    """From a finalizer: not inside it (it may run during a garbage collection)."""
    threading.Thread(target=release_freed_memory, name="rag-release", daemon=True).start()


def release_freed_memory() -> None:
    import ctypes
    import gc

    gc.collect()
    try:
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):  # not glibc
        pass
