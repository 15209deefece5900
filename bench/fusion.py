"""How to mix BM25 and dense scores: the fusion weight swept over four query sets at once.

    python bench/fusion.py                      # needle questions, TL;DR, keyword, SciFact
    python bench/fusion.py --sets needle,tldr   # some of them

Each query is searched once; its candidate papers (every paper either side found in its
first ``retrieval.candidates`` chunks) keep their best chunk's BM25 score and cosine
similarity, and each setting re-ranks those same candidates, so settings differ only in
how they mix. Weight 1.0 is BM25 alone and 0.0 dense alone over those candidates; ``rrf``
is reciprocal-rank fusion of the two orders. Sets: the bundled questions asked over the
needle index (``eval/run.py --needle``), the ML TL;DR known-item and keyword-topic sets
(``bench/ml.py``, same index) and the SciFact training claims (``bench/scifact.py``'s
index). The indexes are those scripts' caches, built on first use.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Any

import ml
import numpy as np
import scifact
from _common import REPO, Query, indexes, metrics, write_json

from eval.questions import PaperLookup, load_questions
from rag import Assistant
from rag.retrieve import Candidates, Filters, fuse_scores

SETS = ("needle", "tldr", "keyword", "scifact")
WEIGHTS = (1.0, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.0)
METRICS = ("recall@1", "mrr", "ndcg@10", "recall@10")
QUESTIONS = REPO / "eval" / "questions" / "icml2026.jsonl"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    from tqdm import tqdm

    default = None
    results: dict[str, Any] = {}
    for name in args.sets:
        assistant, queries = LOADERS[name]()
        default = assistant.settings.retrieval.lexical_weight
        found = {
            q.qid: assistant.retriever.candidates(q.text, Filters(**q.filters))
            for q in tqdm(queries, desc=name, unit=" q", file=sys.stderr, mininterval=2)
        }
        relevant = {q.qid: list(q.relevant) for q in queries}
        results[name] = {"queries": len(queries), "settings": sweep(found, relevant)}
        print(table(name, results[name], default), flush=True)
    out = write_json(
        args.out or indexes.BENCH_OUT / "fusion.json",
        {"benchmark": "fusion", "default_weight": default, "sets": results,
         "seconds": time.perf_counter() - started},
    )  # fmt: skip
    print(f"written: {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bench/fusion.py", description=__doc__.split("\n")[0])
    p.add_argument("--sets", type=_sets, default=list(SETS), help=",".join(SETS) + " (all)")
    p.add_argument("--out", type=Path, help="result JSON (default: bench/out/fusion.json)")
    return p


def _sets(value: str) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names or any(n not in SETS for n in names):
        raise argparse.ArgumentTypeError(f"sets are {', '.join(SETS)}, not {value!r}")
    return names


def sweep(found: dict[str, Candidates], relevant: dict[str, list[str]]) -> dict[str, Any]:
    """Every setting's metrics over the same candidates."""
    settings: dict[str, Callable[[Candidates], np.ndarray]] = {
        f"score {w:.1f}": lambda c, w=w: fuse_scores(c.lexical, c.dense, w) for w in WEIGHTS
    }
    settings["rrf"] = lambda c: 1 / (60 + _ranks(c.lexical)) + 1 / (60 + _ranks(c.dense))
    out = {}
    for name, score in settings.items():
        ranked = {
            qid: [c.paper_ids[i] for i in np.argsort(-score(c), kind="stable")[:10]]
            if c.paper_ids
            else []
            for qid, c in found.items()
        }
        out[name] = metrics.mean_metrics(metrics.ranking_metrics(relevant, ranked, METRICS))
    return out


def _ranks(scores: np.ndarray) -> np.ndarray:
    ranks: np.ndarray = np.argsort(np.argsort(-scores, kind="stable")) + 1
    return ranks


def table(name: str, result: dict[str, Any], default: float | None) -> str:
    lines = [f"{name} ({result['queries']} queries)", "| setting | " + " | ".join(METRICS) + " |"]
    lines.append("| --- |" + " --- |" * len(METRICS))
    for setting, values in result["settings"].items():
        label = {"score 1.0": "BM25 only", "score 0.0": "dense only"}.get(setting, setting)
        if default is not None and setting == f"score {default:.1f}":
            label += " (default)"
        lines.append(f"| {label} | " + " | ".join(f"{values[m]:.3f}" for m in METRICS) + " |")
    return "\n".join(lines)


# -- the query sets ---------------------------------------------------------------------------
def _needle_index() -> Assistant:
    index_dir, sources, prune = indexes.needle_sources()
    return indexes.open_index(index_dir, sources, prune=prune)


def needle() -> tuple[Assistant, list[Query]]:
    """The bundled questions marked for needle mode, follow-ups rewritten as the app does."""
    assistant = _needle_index()
    lookup = PaperLookup(assistant.papers())
    queries = []
    for q in load_questions(QUESTIONS):
        if not (q.needle and q.answerable):
            continue
        history: list[Any] = []
        for earlier in q.history:
            history.append(assistant.ask(earlier, history=list(history)))
        text = assistant.ask(q.question, history=history, **q.filters).query
        filters, query = assistant._filters(text, True, q.venue, q.year, None, None, None, None)
        relevant = tuple(p.paper_id for p in lookup.resolve(q, QUESTIONS))
        queries.append(Query(q.id, query, relevant, asdict(filters)))
    return assistant, queries


def _ml(name: str) -> tuple[Assistant, list[Query]]:
    return _needle_index(), ml.read_queries(ml.DATA, name)


def scifact_set() -> tuple[Assistant, list[Query]]:
    data = scifact.DATA
    index_dir = indexes.BENCH_OUT / "scifact-index"
    papers = indexes.write_papers(
        index_dir / "papers.jsonl", list(scifact.read_corpus(data / "corpus.csv"))
    )
    assistant = indexes.open_index(index_dir, [papers], prune=True)
    return assistant, scifact.read_claims(data / "claims_train.csv")


LOADERS: dict[str, Callable[[], tuple[Assistant, list[Query]]]] = {
    "needle": needle,
    "tldr": lambda: _ml("tldr"),
    "keyword": lambda: _ml("keyword"),
    "scifact": scifact_set,
}


if __name__ == "__main__":
    sys.exit(main())
