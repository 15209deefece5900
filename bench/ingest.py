"""Ingest speed: a fresh index against a bare sentence-transformers encode, then a re-run.

    .venv/bin/python bench/ingest.py --limit 2000          # ~10 min on 2 cores
    .venv/bin/python bench/ingest.py --index-dir /tmp/ml-index  # all 22,981 (1-2 h); empties it

Prints the ingest's wall time and its ratio to encoding the same chunk texts with
sentence-transformers alone (same dtype, batch size and max_seq_length; target <= 1.15),
the re-run on unchanged input and its ratio to the first run (target <= 3%), the peak
memory of the ingest, and the dtype the embedder chose.
"""

from __future__ import annotations

import argparse
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

from _util import DATA, load_average, peak_rss_mb

if TYPE_CHECKING:
    from rag.embedder import Embedder


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", type=Path, default=DATA, help="JSONL paper list")
    parser.add_argument("--limit", type=int, help="first N papers only")
    parser.add_argument("--index-dir", type=Path, help="build here (default: a temp folder)")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="bench-ingest-"))
    source = _subset(args.data, args.limit, work)
    index_dir = args.index_dir or work / "index"
    if index_dir.exists() and any(index_dir.iterdir()):
        shutil.rmtree(index_dir)
    print(f"{source.name}: {_count_lines(source)} records -> {index_dir} ({load_average()})")

    from rag import Assistant

    assistant = Assistant.open(index_dir=index_dir, llm="extractive")
    embedder = assistant.embedder
    started = time.perf_counter()
    embedder.model  # noqa: B018 - loaded before timing, as for the bare encode below
    print(f"model load: {time.perf_counter() - started:.1f}s, dtype {embedder.dtype_name}")

    started = time.perf_counter()
    first = assistant.ingest([source])
    ingest_s = time.perf_counter() - started
    ingest_rss = peak_rss_mb()
    print(f"ingest: {ingest_s:.1f}s  ({first.summary()})")
    print(f"peak memory (maxrss) after ingest: {ingest_rss:.0f} MiB")

    texts = _chunk_texts(source, embedder)
    bare_s = _bare_encode(texts, embedder)
    print(
        f"bare sentence-transformers encode of the same {len(texts)} chunk texts: {bare_s:.1f}s "
        f"(dtype {embedder.dtype_name}, batch {embedder.settings.batch_size}, "
        f"max_seq_length {embedder.max_tokens})"
    )
    print(f"ratio ingest / bare encode: {ingest_s / bare_s:.3f}  (target <= 1.15)")

    started = time.perf_counter()
    again = assistant.ingest([source])
    rerun_s = time.perf_counter() - started
    print(f"re-run on unchanged input: {rerun_s:.2f}s  ({again.summary()})")
    print(f"ratio re-run / first: {rerun_s / ingest_s:.2%}  (target <= 3%)")
    print(f"({load_average()})")
    if args.index_dir is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0


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
    """What the ingest embedded: every paper's chunks, title included."""
    from rag.chunking import chunk_paper
    from rag.ingest import read_sources

    papers, _ = read_sources([source])
    return [
        c.embed_text
        for sp in papers
        for c in chunk_paper(sp.paper, embedder.max_tokens, embedder.count_tokens)
    ]


def _bare_encode(texts: list[str], embedder: Embedder) -> float:
    """Seconds sentence-transformers alone takes for the texts, set up as the embedder is."""
    import torch
    from sentence_transformers import SentenceTransformer

    dtype = torch.bfloat16 if embedder.dtype_name == "bfloat16" else torch.float32
    model = SentenceTransformer(
        embedder.path, device="cpu", model_kwargs={"dtype": dtype}, local_files_only=True
    )
    model.max_seq_length = embedder.max_tokens
    started = time.perf_counter()
    model.encode(
        texts,
        batch_size=embedder.settings.batch_size,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )
    return time.perf_counter() - started


if __name__ == "__main__":
    sys.exit(main())
