"""Fresh-process start: `rag ask --llm extractive` against a plain script loading the stack.

    .venv/bin/python bench/cli_start.py --index-dir bench/out/needle-index --runs 5

Both answer the same question from a new process with a warm disk cache (one untimed run
first). The plain script imports torch, sentence-transformers, chromadb and bm25s, as a
script written against these libraries would, and then answers through ``rag``. Prints
the median wall time of each, and their ratio (targets: rag <= 2 s, at least 2x faster).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from pathlib import Path

from _util import BIN, load_average, median

QUESTION = "Which papers propose methods for learning with noisy labels?"

PLAIN = """
import sys
import torch, sentence_transformers, chromadb, bm25s
from rag import Assistant
answer = Assistant.open(index_dir=sys.argv[1], llm="extractive").ask(sys.argv[2])
print(answer.text)
"""


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--question", default=QUESTION)
    args = parser.parse_args(argv)

    cli = [str(BIN / "rag"), "ask", "--index-dir", str(args.index_dir), "--llm", "extractive"]
    cli.append(args.question)
    plain = [sys.executable, "-c", PLAIN, str(args.index_dir), args.question]
    first = _run(cli)  # warms the disk cache and the page cache
    print(f"rag ask answer starts: {first[1].splitlines()[0][:100]!r}")
    _run(plain)
    rag_s, plain_s = [], []
    for _ in range(args.runs):  # interleaved, so both see the same machine load
        rag_s.append(_run(cli)[0])
        plain_s.append(_run(plain)[0])
    rag_med, plain_med = median(rag_s), median(plain_s)
    print(f"rag ask --llm extractive: median {rag_med:.2f}s of {_list(rag_s)}  (target <= 2 s)")
    print(
        f"plain script (torch + sentence-transformers + chromadb + bm25s): median "
        f"{plain_med:.2f}s of {_list(plain_s)}"
    )
    print(f"ratio plain / rag: {plain_med / rag_med:.2f}x  (target >= 2x); {load_average()}")
    return 0


def _run(cmd: list[str]) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed: {done.stderr[-1000:]}")
    return elapsed, done.stdout


def _list(values: list[float]) -> str:
    return "[" + ", ".join(f"{v:.2f}" for v in values) + "]"


if __name__ == "__main__":
    sys.exit(main())
