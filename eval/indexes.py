"""Evaluation and benchmark indexes, built once and reused by every later run.

An index folder is a plain Chroma index (``rag stats --index-dir DIR`` reads it) that also
holds ``eval-sources.json``, a stamp of the paper lists it was built from, and any paper
list written for it. A run whose sources match the stamp opens the index without reading a
record; otherwise the ingest is incremental, so only new or changed papers are embedded and
an interrupted build resumes where it stopped.

Paper lists are ingested as they are: the readers take a record's id, title, abstract,
venue, year, authors, url and keywords, and only title and abstract are embedded and
searched, so a TL;DR field is never indexed. The full needle index therefore holds exactly
what ``rag ingest rag/data/icml2026_abstracts.txt ../shared/data/ml_abstracts.jsonl``
would build, and such an index can be reused for it.
"""

from __future__ import annotations

import hashlib
import itertools
import json
import sys
import time
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from rag import Assistant

REPO = Path(__file__).resolve().parents[1]
BENCH_OUT = REPO / "bench" / "out"
BUNDLED = REPO / "rag" / "data" / "icml2026_abstracts.txt"
SHARED = REPO.parent / "shared"
DISTRACTORS = SHARED / "data" / "ml_abstracts.jsonl"
STAMP = "eval-sources.json"


def open_index(
    index_dir: Path, sources: list[Path], *, prune: bool = False, llm: str = "extractive"
) -> Assistant:
    """An assistant over an index holding ``sources``, ingested only when they changed.

    ``prune`` removes papers of other sources: for indexes that only benchmarks write.
    """
    assistant = Assistant.open(index_dir=index_dir, llm=llm)
    stamp = _stamp(sources, assistant, prune)
    built = _read_json(index_dir / STAMP)
    # the version changes with any write, so an index another run has changed is checked
    if assistant.store.exists() and built.get("stamp") == stamp:
        if built.get("version") == assistant.store.version():
            return assistant
    with _ingest_bar(f"indexing {index_dir.name}") as progress:
        report = assistant.ingest(sources, prune=prune, skip_invalid=True, progress=progress)
    print(f"{index_dir}: {report.summary()}", file=sys.stderr)
    record = {
        "stamp": stamp,
        "version": assistant.store.version(),
        "sources": [str(s) for s in sources],
        "prune": prune,
    }
    (index_dir / STAMP).write_text(json.dumps(record, indent=2) + "\n")
    return assistant


def write_papers(path: Path, records: Iterable[dict[str, Any]]) -> Path:
    """Write records as JSONL, leaving the file untouched when its content is the same."""
    return write_lines(path, (json.dumps(r, ensure_ascii=False) + "\n" for r in records))


def write_lines(path: Path, lines: Iterable[str]) -> Path:
    text = "".join(line if line.endswith("\n") else line + "\n" for line in lines)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    for line in jsonl_lines(path):
        yield json.loads(line)


def jsonl_lines(path: Path) -> Iterator[str]:
    with Path(path).open(encoding="utf-8") as f:
        yield from (line for line in f if line.strip())


def needle_sources(
    distractors: Path = DISTRACTORS, limit: int | None = None, index_dir: Path | None = None
) -> tuple[Path, list[Path], bool]:
    """The needle index folder, its sources (bundled papers, distractors) and whether to prune.

    The whole distractor list shares ``bench/out/needle-index`` with ``bench/ml.py`` and is
    never pruned; a slice (``limit``) gets a folder of its own, so a quick run never shrinks
    the full index.
    """
    if limit is None:
        return index_dir or BENCH_OUT / "needle-index", [BUNDLED, Path(distractors)], False
    index_dir = index_dir or BENCH_OUT / "needle-index-slice"
    lines = itertools.islice(jsonl_lines(distractors), limit)
    return index_dir, [BUNDLED, write_lines(index_dir / "distractors.jsonl", lines)], True


def _stamp(sources: list[Path], assistant: Assistant, prune: bool) -> str:
    digest = hashlib.sha1(str(prune).encode())
    for source in sources:
        digest.update(str(Path(source).resolve()).encode())
        digest.update(hashlib.sha1(Path(source).read_bytes()).digest())
    settings = assistant.settings.embedder
    digest.update(f"{assistant.embedder.path}|{settings.chunk_tokens}".encode())
    return digest.hexdigest()


def _read_json(path: Path) -> dict[str, Any]:
    try:
        data = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


class _ingest_bar:
    """A tqdm bar (stderr) fed by the ingest's progress callback."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.bar: Any = None
        self.started = time.time()

    def __enter__(self) -> Any:
        self.started = time.time()
        return self.update

    def update(self, done: int, total: int) -> None:
        if self.bar is None:  # the first call comes after the first batch is embedded
            from tqdm import tqdm

            self.bar = tqdm(total=total, desc=self.label, unit=" papers", file=sys.stderr)
            self.bar.start_t = self.started  # so the rate counts that batch's time too
        self.bar.update(done - self.bar.n)

    def __exit__(self, *exc: Any) -> None:
        if self.bar is not None:
            self.bar.close()
