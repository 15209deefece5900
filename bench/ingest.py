"""Ingest speed: `rag ingest` into a fresh index against a bare sentence-transformers encode
(torch, float32) of the same chunk texts, in the same run; then a re-run on the same input.

    .venv/bin/python bench/ingest.py --limit 2000                     # ~5 min on 2 cores
    .venv/bin/python bench/ingest.py --limit 2000 --precision fp32,int8
    .venv/bin/python bench/ingest.py --index-dir /tmp/ml-index         # all 22,981; empties it

Prints the ingest's wall time (a `rag ingest` process, start-up included), its papers/s
and tokens/s, its peak memory, its ratio to the bare torch encode (target <= 0.65), the
re-run's time on unchanged input (in this process; target <= 3% of the first), and the
time for the whole 22,981-abstract list: measured when the run is over all of it, else
estimated from this run's papers/s.
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from _util import BIN, DATA, load_average

if TYPE_CHECKING:
    from rag.evaluation import Embedder

FULL_LIST = 22_981  # abstracts in ml_abstracts.jsonl


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="JSONL paper list")
    parser.add_argument("--limit", type=int, help="first N papers only")
    parser.add_argument("--index-dir", type=Path, help="build here (default: a temp folder)")
    parser.add_argument(
        "--precision", default="", help="fp32, int8 or both (fp32,int8); default: the setting"
    )
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    source = _subset(args.data, args.limit, work)
    records = _count_lines(source)
    print(f"{source.name}: {records} records ({load_average()})")

    from rag import Assistant
    from rag.settings import EmbedderSettings

    precisions = [p for p in args.precision.split(",") if p] or [EmbedderSettings().precision]
    results: dict[str, float] = {}
    for n, precision in enumerate(precisions):
        os.environ["RAG_EMBEDDER__PRECISION"] = precision
        index_dir = args.index_dir or work / f"index-{precision}"
        if index_dir.exists() and any(index_dir.iterdir()):
            shutil.rmtree(index_dir)
        assistant = Assistant.open(index_dir=index_dir, llm="extractive")
        embedder = assistant.embedder
        embedder.warm_up()  # the export is made here if missing, not in the timed run
        if n == 0:
            texts = _chunk_texts(source, embedder)
            tokens = sum(embedder.count_tokens(texts))
            print(f"{len(texts)} chunks, {tokens} tokens")
        ingest_s, rss = _rag_ingest(source, index_dir)
        results[precision] = ingest_s
        papers = assistant.stats().papers
        print(
            f"rag ingest ({embedder.runtime} {precision}): {ingest_s:.1f}s, "
            f"{papers / ingest_s:.1f} papers/s, {tokens / ingest_s:.0f} tokens/s, "
            f"peak memory {rss:.0f} MiB"
        )
        full = "measured" if records >= FULL_LIST else "estimated from this run's papers/s"
        minutes = (ingest_s if records >= FULL_LIST else FULL_LIST / papers * ingest_s) / 60
        print(f"  the whole {FULL_LIST:,}-abstract list: {minutes:.1f} min ({full})")
        if n == 0:
            started = time.perf_counter()
            again = assistant.ingest([source])
            rerun_s = time.perf_counter() - started
            print(f"  re-run on unchanged input: {rerun_s:.2f}s ({again.summary()})")
            print(f"  ratio re-run / first: {rerun_s / ingest_s:.2%}  (target <= 3%)")
        if args.index_dir is not None:
            break  # one build in the folder given

    bare_s = _bare_encode(texts, embedder.path, embedder.max_tokens)
    print(
        f"bare sentence-transformers encode (torch float32, batch 64) of the same chunk texts: "
        f"{bare_s:.1f}s, {tokens / bare_s:.0f} tokens/s"
    )
    for precision, ingest_s in results.items():
        print(
            f"ratio rag ingest ({precision}) / bare torch encode: {ingest_s / bare_s:.3f}  "
            "(target <= 0.65)"
        )
    print(f"({load_average()})")
    if args.index_dir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


def _rag_ingest(source: Path, index_dir: Path) -> tuple[float, float]:
    """Seconds a `rag ingest` process takes, from its start to its exit, and its peak
    memory in MiB."""
    cmd = [str(BIN / "rag"), "ingest", str(source), "--index-dir", str(index_dir)]
    started = time.perf_counter()
    process = subprocess.Popen(cmd, stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(process.pid, 0)
    seconds = time.perf_counter() - started
    process.returncode = os.waitstatus_to_exitcode(status)
    if process.returncode:
        raise SystemExit(f"rag ingest failed with exit code {process.returncode}")
    return seconds, usage.ru_maxrss / 1024


def _subset(data: Path, limit: int | None, work: Path) -> Path:
    if not limit:
        return data
    subset = work / f"{data.stem}.first{limit}{data.suffix}"
    with data.open(encoding="utf-8") as src, subset.open("w", encoding="utf-8") as out:
        for n, line in enumerate(src):
            if n >= limit:
                break
            out.write(line)
    return subset


def _count_lines(path: Path) -> int:
    with path.open("rb") as f:
        return sum(1 for _ in f)


def _chunk_texts(source: Path, embedder: Embedder) -> list[str]:
    """What the ingest embeds: every paper's chunks, title included."""
    from rag.evaluation import chunk_paper, read_sources

    papers, _ = read_sources([source])
    return [
        c.embed_text
        for sp in papers
        for c in chunk_paper(sp.paper, embedder.max_tokens, embedder.count_tokens)
    ]


def _bare_encode(texts: list[str], path: str, max_tokens: int) -> float:
    """Seconds sentence-transformers alone (torch, float32) takes for the texts."""
    from sentence_transformers import SentenceTransformer
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    model = SentenceTransformer(path, device="cpu", local_files_only=True)
    model.max_seq_length = max_tokens
    model.encode(texts[:64], batch_size=64)  # warm: first-call allocations are not timed
    started = time.perf_counter()
    model.encode(
        texts,
        batch_size=64,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return time.perf_counter() - started


if __name__ == "__main__":
    sys.exit(main())
