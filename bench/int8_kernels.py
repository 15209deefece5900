"""What onnxruntime's exact int8 kernels cost and change on a CPU without VNNI.

    .venv/bin/python bench/int8_kernels.py [--n 30]

The trained verifier (``rag.answer.verifier``, int8) and the int8 embedder run with
``session.x64quantprecision=1``: on x64 CPUs without VNNI (AVX2), onnxruntime's default u8s8
int8 matrix products saturate at 16 bits, and its u8u8 kernels do not. In one process, each
model is run both ways on the first ``--n`` abstracts of eval/corpora/iclr2018.jsonl (the
verifier on one question against each title and abstract, the embedder on the abstracts),
alternating twice; printed: seconds per batch each way, and how far apart the verifier's
logits and the embedder's vectors are. On a CPU with VNNI the option changes nothing.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import numpy as np
from _util import load_average

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

import onnxruntime as ort  # noqa: E402

from rag.evaluation import Embedder, Verifier  # noqa: E402
from rag.settings import EmbedderSettings  # noqa: E402

OPTION = "session.x64quantprecision"


@contextmanager
def default_kernels() -> Iterator[None]:
    """Sessions opened inside run onnxruntime's default kernels: the option is not set."""
    set_entry = ort.SessionOptions.add_session_config_entry

    def without(options: ort.SessionOptions, key: str, value: str) -> None:
        if key != OPTION:
            set_entry(options, key, value)

    ort.SessionOptions.add_session_config_entry = without  # type: ignore[method-assign]
    try:
        yield
    finally:
        ort.SessionOptions.add_session_config_entry = set_entry  # type: ignore[method-assign]


Run = tuple[np.ndarray, np.ndarray, float, float]  # logits, vectors, seconds of each


def run(pairs: list[tuple[str, str]], texts: list[str]) -> Run:
    verifier, embedder = Verifier(), Embedder(EmbedderSettings(precision="int8"))
    verifier.scores(pairs[:2]), embedder.embed(texts[:2])  # sessions opened, warm
    started = time.perf_counter()
    logits = verifier.scores(pairs)
    verifier_s = time.perf_counter() - started
    started = time.perf_counter()
    vectors = embedder.embed(texts)
    return logits, vectors, verifier_s, time.perf_counter() - started


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--n", type=int, default=30)
    args = p.parse_args(argv)
    path = REPO / "eval" / "corpora" / "iclr2018.jsonl"
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()][: args.n]
    texts = [r["abstract"] for r in rows]
    question = "Which papers study adversarial examples?"
    pairs = [(question, f"{r['title']}. {r['abstract']}") for r in rows]
    print(f"{load_average()}; {len(rows)} abstracts")
    found: dict[str, Run] = {}
    for round_ in (1, 2):
        for name in ("default u8s8", "exact u8u8"):
            if name.startswith("default"):
                with default_kernels():
                    found[name] = run(pairs, texts)
            else:
                found[name] = run(pairs, texts)
            _, _, verifier, embedder = found[name]
            print(f"round {round_}, {name}: verifier {verifier:.2f} s, embedder {embedder:.2f} s")
    fast, exact = found["default u8s8"], found["exact u8u8"]
    gap = np.abs(fast[0] - exact[0])
    cosines = np.sum(fast[1] * exact[1], axis=1)
    print(f"verifier logits apart: mean {gap.mean():.3f}, max {gap.max():.3f}")
    print(f"int8 embedder vectors, cosine between the two: min {cosines.min():.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
