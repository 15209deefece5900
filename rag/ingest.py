"""Files to papers to chunks to the index: validated first, written incrementally.

Nothing is written until every source has been read and checked, so bad input leaves the
index exactly as it was. Chunk ids are deterministic and each chunk records a hash of its
paper, so a run killed half-way is completed, without duplicates, by running it again.

A source is its file's absolute path: files with the same name in two folders are two
sources. A paper changes only through its own source: by id, or, for an edited paragraph
of a text list, at the same place in the same file. An id that another source's paper
already holds is refused (or skipped) unless ``replace`` says the new files win.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .chunking import Chunk, chunk_paper
from .embedder import Embedder
from .errors import InputError
from .store import PaperStore, Provenance, paper_metadata
from .types import Paper

Progress = Callable[[int, int], None]
_BATCH_PAPERS = 512


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
    provenance = Provenance(embedder.name, embedder.dim, embedder.max_tokens)
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
        store.bump_version()
    report.seconds = time.perf_counter() - started
    return report


def _write_papers(
    store: PaperStore,
    embedder: Embedder,
    papers: list[SourcedPaper],
    state: dict[str, IndexedPaper],
    progress: Progress | None,
) -> int:
    written = 0
    for start in range(0, len(papers), _BATCH_PAPERS):
        batch = papers[start : start + _BATCH_PAPERS]
        per_paper = [
            chunk_paper(sp.paper, embedder.max_tokens, embedder.count_tokens) for sp in batch
        ]
        texts = [c.embed_text for chunks in per_paper for c in chunks]
        vectors = embedder.embed(texts)
        ids, documents, metadatas = [], [], []
        for sp, chunks in zip(batch, per_paper, strict=True):
            for c in chunks:
                ids.append(f"{c.paper_id}::{c.number}")
                documents.append(c.text)
                metadatas.append(_chunk_meta(sp, c, len(chunks)))
        store.upsert(ids, vectors, documents, metadatas)
        fresh = set(ids)
        old = (state.get(sp.paper.paper_id) for sp in batch)
        # a shorter new version must leave none of the old chunks behind
        store.delete_chunks([cid for e in old if e for cid in e.chunk_ids if cid not in fresh])
        written += len(ids)
        if progress:
            progress(min(start + _BATCH_PAPERS, len(papers)), len(papers))
    return written


def _chunk_meta(sp: SourcedPaper, chunk: Chunk, n_chunks: int) -> dict[str, Any]:
    meta = paper_metadata(sp.paper, sp.content_hash, sp.source, sp.position)
    meta["abstract_key"] = sp.abstract_key
    meta["chunk"] = chunk.number
    meta["n_chunks"] = n_chunks
    if chunk.number == 0:
        meta["abstract"] = sp.paper.abstract
    return meta
