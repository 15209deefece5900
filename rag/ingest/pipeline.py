"""Files to papers to chunks to the index: validated first, written incrementally.

Nothing is written until every source has been read and checked, so bad input leaves the
index exactly as it was. Chunk ids are deterministic and each chunk records a hash of its
paper, so a run killed half-way is completed, without duplicates, by running it again.

Writing is a pipeline over windows of papers from every file: while the model embeds one
window's chunks (sorted by length into batches, ``Embedder.prepare``), the next window is
chunked and tokenized on another thread, and each paper whose chunks are all embedded is
written to Chroma on a third.

A source is its file's absolute path: files with the same name in two folders are two
sources. A paper changes only through its own source: by id, or, for an edited paragraph
of a text list, at the same place in the same file. An id that another source's paper
already holds is refused (or skipped) unless ``replace`` says the new files win.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import time
from collections.abc import Callable, Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, TypeVar

import numpy as np

from ..errors import InputError
from ..index import snapshot
from ..index.embedder import Batch, Embedder, Prepared
from ..index.store import PaperStore, chunk_metadata
from ..text.chunking import Chunk, chunk_paper
from ..types import Paper

Progress = Callable[[int, int], None]
T = TypeVar("T")
U = TypeVar("U")
# Papers whose chunks are batched by length together. With 512-token batches, windows of
# 256 abstracts pad 0.7% of the tokens (one sort of 2,000 abstracts: 0.1%); small windows
# keep memory bounded and progress even (a paper is written once all its chunks are).
_WINDOW_PAPERS = 256
_WRITE_PAPERS = 64  # papers per write to the store


@dataclass
class IngestReport:
    """What one ingest run did, paper by paper."""

    added: int = 0
    updated: int = 0
    unchanged: int = 0
    removed: int = 0
    duplicates: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)  # (where, why)
    chunks_written: int = 0
    seconds: float = 0.0
    sources: list[str] = field(default_factory=list)
    replaced: int = 0  # of the updated: edited papers at the same place in the same file
    dropped: list[tuple[str, str]] = field(default_factory=list)  # values left out: where, what

    def summary(self) -> str:
        replaced = f" ({self.replaced} at the same place in the same file)" if self.replaced else ""
        n = len(self.dropped)
        dropped = f", {n} value{'s' if n != 1 else ''} dropped" if n else ""
        return (
            f"{self.added} added, {self.updated} updated{replaced}, {self.unchanged} unchanged, "
            f"{self.removed} removed, {self.duplicates} duplicates, {len(self.skipped)} skipped"
            f"{dropped} ({self.chunks_written} chunks written in {self.seconds:.1f}s)"
        )


@dataclass(frozen=True)
class SourcedPaper:
    paper: Paper
    source: str  # the file's absolute path
    position: int
    where: str = ""  # file and line, as the user named the file

    @property
    def content_hash(self) -> str:
        p = self.paper
        fields = [
            p.title,
            p.abstract,
            p.title_derived,
            p.venue,
            p.year,
            p.authors,
            p.url,
            p.keywords,
        ]
        return hashlib.sha1(json.dumps(fields, ensure_ascii=False).encode()).hexdigest()[:16]

    @property
    def abstract_key(self) -> str:
        from .readers import paper_id_for

        return paper_id_for(self.paper.abstract)


@dataclass
class IndexedPaper:
    content_hash: str
    abstract_key: str
    source: str
    position: int
    chunks: set[int] = field(default_factory=set)
    n_chunks: int = 0
    chunk_ids: list[str] = field(default_factory=list)

    @property
    def complete(self) -> bool:
        return self.n_chunks > 0 and self.chunks == set(range(self.n_chunks))


@dataclass
class Plan:
    write: list[SourcedPaper] = field(default_factory=list)
    delete: set[str] = field(default_factory=set)  # paper ids whose chunks all go


def read_sources(
    paths: Iterable[Path],
    *,
    format: str | None = None,
    venue: str | None = None,
    year: int | None = None,
    skip_invalid: bool = False,
) -> tuple[list[SourcedPaper], IngestReport]:
    """Read and validate every source; dedupe by id and by abstract across files."""
    from .readers import read_papers

    report = IngestReport()
    papers: list[SourcedPaper] = []
    seen_ids: set[str] = set()
    seen_abstracts: set[str] = set()
    for path in paths:
        result = read_papers(
            Path(path), format=format, venue=venue, year=year, skip_invalid=skip_invalid
        )
        report.sources.append(result.source)
        report.skipped.extend(result.skipped)
        report.dropped.extend(result.dropped)
        report.duplicates += result.duplicates
        source = str(Path(path).resolve())
        for position, (paper, where) in enumerate(zip(result.papers, result.places, strict=True)):
            sourced = SourcedPaper(paper, source, position, where)
            if paper.paper_id in seen_ids or sourced.abstract_key in seen_abstracts:
                report.duplicates += 1
                continue
            seen_ids.add(paper.paper_id)
            seen_abstracts.add(sourced.abstract_key)
            papers.append(sourced)
    if not papers:
        raise InputError("no papers with an abstract were found", ", ".join(report.sources))
    return papers, report


def indexed_papers(store: PaperStore) -> dict[str, IndexedPaper]:
    """What the index holds now, paper by paper (chunk numbers seen, with their hash)."""
    state: dict[str, IndexedPaper] = {}
    if not store.exists():
        return state
    for chunk in store.iter_chunks(with_documents=False):
        m = chunk.meta
        entry = state.setdefault(
            m["paper_id"],
            IndexedPaper(m["content_hash"], m.get("abstract_key", ""), m["source"], m["position"]),
        )
        entry.chunk_ids.append(chunk.chunk_id)
        if m["content_hash"] == entry.content_hash:
            entry.chunks.add(int(m["chunk"]))
            entry.n_chunks = int(m["n_chunks"])
        else:  # chunks of two versions: a write was interrupted; redo this paper
            entry.content_hash = ""
    return state


def plan_changes(
    papers: list[SourcedPaper],
    state: dict[str, IndexedPaper],
    report: IngestReport,
    prune: bool,
    *,
    replace: bool = False,
    skip_invalid: bool = False,
) -> Plan:
    """Decide per paper: unchanged, added, updated (in place or replacing), duplicate, removed."""
    plan = Plan()
    new_ids = {p.paper.paper_id for p in papers}
    by_abstract = {e.abstract_key: pid for pid, e in state.items()}
    by_position = {(e.source, e.position): pid for pid, e in state.items()}
    for sp in papers:
        pid = sp.paper.paper_id
        old = state.get(pid)
        if old is not None:
            _plan_known(sp, old, plan, report, replace=replace, skip_invalid=skip_invalid)
            continue
        twin = by_abstract.get(sp.abstract_key)
        if twin is not None and twin not in plan.delete:
            report.duplicates += 1  # the same abstract is indexed under another id
            new_ids.add(twin)
            continue
        replaced = by_position.get((sp.source, sp.position))
        if replaced is not None and replaced not in new_ids and replaced not in plan.delete:
            plan.delete.add(replaced)  # an edited abstract from the same place in the same file
            report.updated += 1
            report.replaced += 1
        else:
            report.added += 1
        plan.write.append(sp)
    if prune:
        gone = set(state) - new_ids - plan.delete
        plan.delete |= gone
        report.removed = len(gone)
    return plan


def _plan_known(
    sp: SourcedPaper,
    old: IndexedPaper,
    plan: Plan,
    report: IngestReport,
    *,
    replace: bool,
    skip_invalid: bool,
) -> None:
    """A paper whose id the index holds: unchanged, updated, a duplicate, or a conflict."""
    if old.complete and old.content_hash == sp.content_hash:
        report.unchanged += 1
    elif old.source == sp.source or replace or not old.complete:
        report.updated += 1
        plan.write.append(sp)
    elif sp.paper.paper_id == sp.abstract_key:
        report.duplicates += 1  # no id of its own: the same abstract, from another file
    else:
        why = f"id {sp.paper.paper_id!r} is already another paper's, from {old.source}"
        if not skip_invalid:
            raise InputError(
                f"{why}. Give this paper its own id, or pass --replace to let these files "
                "update papers from other files.",
                sp.where,
            )
        report.skipped.append((sp.where, why))


def ingest(
    paths: Iterable[Path],
    store: PaperStore,
    embedder: Embedder,
    *,
    rebuild: bool = False,
    prune: bool = False,
    replace: bool = False,
    format: str | None = None,
    venue: str | None = None,
    year: int | None = None,
    skip_invalid: bool = False,
    progress: Progress | None = None,
) -> IngestReport:
    """Ingest paper lists into the index; see the module docstring for the guarantees."""
    started = time.perf_counter()
    provenance = embedder.provenance
    if not rebuild and store.exists():
        store.check(provenance)  # before reading: a mismatch is the first thing to fix
    papers, report = read_sources(
        paths, format=format, venue=venue, year=year, skip_invalid=skip_invalid
    )
    if rebuild:
        store.drop()
    store.open_for_write(provenance)
    state = indexed_papers(store)
    plan = plan_changes(papers, state, report, prune, replace=replace, skip_invalid=skip_invalid)
    if plan.write or plan.delete:
        store.bump_version()  # readers elsewhere reload even if this run is cut short
        store.delete_chunks([cid for pid in plan.delete for cid in state[pid].chunk_ids])
        report.chunks_written = _write_papers(store, embedder, plan.write, state, progress)
        stamp = store.new_stamp()
        snapshot.publish(store, stamp)  # there before any reader sees the stamp
        store.bump_version(stamp)
    snapshot.publish(store)  # readers load this instead of opening Chroma (if not there yet)
    report.seconds = time.perf_counter() - started
    return report


@dataclass(frozen=True)
class _Window:
    """Papers whose chunks are embedded together, chunked and tokenized."""

    papers: list[SourcedPaper]
    chunks: list[list[Chunk]]  # per paper
    prepared: Prepared

    @cached_property
    def first_text(self) -> list[int]:
        """Where each paper's chunks start among the window's texts."""
        return [0, *itertools.accumulate(len(c) for c in self.chunks)][:-1]

    @cached_property
    def owner(self) -> np.ndarray:
        """Each text's paper, by position in ``papers``."""
        return np.repeat(np.arange(len(self.chunks)), [len(c) for c in self.chunks])


def _write_papers(
    store: PaperStore,
    embedder: Embedder,
    papers: list[SourcedPaper],
    state: dict[str, IndexedPaper],
    progress: Progress | None,
) -> int:
    """Embed and write the papers (see the module docstring); returns the chunks written."""
    if not papers:
        return 0
    windows = [papers[i : i + _WINDOW_PAPERS] for i in range(0, len(papers), _WINDOW_PAPERS)]
    with _Writer(store, state, progress, len(papers)) as writer:
        for window in _ahead(lambda w: _prepare(w, embedder), windows):
            embedder.run(window.prepared, writer.collect(window, embedder.dim))
    return writer.chunks


def _prepare(papers: list[SourcedPaper], embedder: Embedder) -> _Window:
    chunks = [chunk_paper(sp.paper, embedder.max_tokens, embedder.count_tokens) for sp in papers]
    texts = [c.embed_text for per_paper in chunks for c in per_paper]
    return _Window(papers, chunks, embedder.prepare(texts))


def _ahead(make: Callable[[T], U], items: list[T]) -> Iterator[U]:
    """``make(item)`` for each item in turn, the next one made on another thread while the
    caller works on this one."""
    if not items:
        return
    with ThreadPoolExecutor(1, thread_name_prefix="rag-ingest-prepare") as pool:
        future: Future[U] | None = pool.submit(make, items[0])
        for following in [*items[1:], None]:
            assert future is not None
            current = future.result()
            future = pool.submit(make, following) if following is not None else None
            yield current


class _Writer:
    """Writes papers to the store on a thread of its own as soon as all their chunks are
    embedded, ``_WRITE_PAPERS`` at a time, and reports the papers written (from the caller's
    thread, a few times a second at most)."""

    def __init__(
        self,
        store: PaperStore,
        state: dict[str, IndexedPaper],
        progress: Progress | None,
        total: int,
    ) -> None:
        self.store, self.state = store, state
        self.progress, self.total = progress, total
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="rag-ingest-write")
        self.pending: list[Future[tuple[int, int]]] = []
        self.papers = self.chunks = 0  # written
        self.reported = 0.0

    def __enter__(self) -> _Writer:
        return self

    def __exit__(self, error: type[BaseException] | None, *rest: Any) -> None:
        self.pool.shutdown(wait=True, cancel_futures=error is not None)
        if error is None:
            self._collect_written(wait=True)
            self._report(final=True)

    def collect(self, window: _Window, dim: int) -> Callable[[Batch, np.ndarray], None]:
        """A callback for ``Embedder.run``: keeps the window's vectors, hands papers whose
        chunks are all embedded to the writing thread."""
        vectors = np.zeros((window.prepared.count, dim), dtype=np.float32)
        left = [len(c) for c in window.chunks]
        ready: list[int] = []
        finished = 0

        def batch_done(batch: Batch, batch_vectors: np.ndarray) -> None:
            nonlocal finished
            vectors[batch.rows] = batch_vectors
            for paper in window.owner[batch.rows]:
                left[paper] -= 1
                if not left[paper]:
                    ready.append(int(paper))
                    finished += 1
            if len(ready) >= _WRITE_PAPERS or (ready and finished == len(left)):
                self.pending.append(self.pool.submit(self._write, window, ready[:], vectors))
                ready.clear()
            self._collect_written(wait=False)
            self._report()

        return batch_done

    def _write(self, window: _Window, papers: list[int], vectors: np.ndarray) -> tuple[int, int]:
        ids, rows, documents, metadatas = [], [], [], []
        for n in papers:
            sp, chunks = window.papers[n], window.chunks[n]
            for c in chunks:
                ids.append(f"{c.paper_id}::{c.number}")
                rows.append(window.first_text[n] + c.number)
                documents.append(c.text)
                metadatas.append(_chunk_meta(sp, c, len(chunks)))
        self.store.upsert(ids, vectors[rows], documents, metadatas)
        fresh = set(ids)
        old = (self.state.get(window.papers[n].paper.paper_id) for n in papers)
        # a shorter new version must leave none of the old chunks behind
        self.store.delete_chunks([cid for e in old if e for cid in e.chunk_ids if cid not in fresh])
        return len(papers), len(ids)

    def _collect_written(self, wait: bool) -> None:
        """Count the finished writes; a failed one raises here."""
        for future in [f for f in self.pending if wait or f.done()]:
            papers, chunks = future.result()
            self.papers += papers
            self.chunks += chunks
            self.pending.remove(future)

    def _report(self, final: bool = False) -> None:
        now = time.perf_counter()
        if self.progress and self.papers and (final or now - self.reported >= 0.25):
            self.reported = now
            self.progress(self.papers, self.total)


def _chunk_meta(sp: SourcedPaper, chunk: Chunk, n_chunks: int) -> dict[str, Any]:
    where = (sp.content_hash, sp.source, sp.position, sp.abstract_key)
    return chunk_metadata(sp.paper, *where, chunk.number, n_chunks)
