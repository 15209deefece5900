"""Evaluation and benchmark indexes, built once and reused by every later run.

An index folder holds the Chroma index (``chroma/``), the paper lists written for it
(``*.jsonl``, rewritten only when their content changes) and ``built.json``, a stamp of
the sources it was built from. A run whose sources match the stamp opens the index
without reading a record; otherwise the ingest is incremental, so only new or changed
papers are embedded and an interrupted build resumes where it stopped.
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
# What a benchmark may index of a paper: never a TL;DR (it is a query) nor its keywords.
PAPER_FIELDS = ("id", "title", "abstract", "venue", "year", "authors", "url")


def open_index(index_dir: Path, sources: list[Path], *, llm: str = "extractive") -> Assistant:
    """An assistant over an index of exactly ``sources``, ingested only when they changed."""
    assistant = Assistant.open(index_dir=index_dir / "chroma", llm=llm)
    stamp_file = index_dir / "built.json"
    stamp = _stamp(sources, assistant)
    if assistant.store.exists() and _read_json(stamp_file).get("stamp") == stamp:
        return assistant
    with _ingest_bar(f"indexing {index_dir.name}") as progress:
        report = assistant.ingest(sources, prune=True, skip_invalid=True, progress=progress)
    print(f"{index_dir}: {report.summary()}", file=sys.stderr)
    stamp_file.write_text(json.dumps({"stamp": stamp, "sources": [str(s) for s in sources]}))
    return assistant


def write_papers(path: Path, records: Iterable[dict[str, Any]]) -> Path:
    """Write records as JSONL, leaving the file untouched when its content is the same."""
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records)
    path.parent.mkdir(parents=True, exist_ok=True)
    if not path.exists() or path.read_text(encoding="utf-8") != text:
        path.write_text(text, encoding="utf-8")
    return path


def paper_record(row: dict[str, Any]) -> dict[str, Any]:
    """The indexable fields of a paper record (title and abstract, never a TL;DR)."""
    return {k: row[k] for k in PAPER_FIELDS if row.get(k) not in (None, "", [])}


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    with Path(path).open(encoding="utf-8") as f:
        for line in f:
            if line.strip():
                yield json.loads(line)


def needle_sources(
    distractors: Path = DISTRACTORS, limit: int | None = None, index_dir: Path | None = None
) -> tuple[Path, list[Path]]:
    """The needle index folder and its sources: the bundled papers among the distractors.

    The whole distractor list shares ``bench/out/needle-index`` (with ``bench/ml.py``); a
    slice (``limit``) gets a folder of its own, so a quick run never shrinks the full index.
    """
    index_dir = index_dir or BENCH_OUT / ("needle-index" if limit is None else "needle-index-slice")
    records = (paper_record(r) for r in read_jsonl(distractors))
    if limit is not None:
        records = itertools.islice(records, limit)
    return index_dir, [BUNDLED, write_papers(index_dir / "distractors.jsonl", records)]


def _stamp(sources: list[Path], assistant: Assistant) -> str:
    digest = hashlib.sha1()
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
