"""Complete lists: the set ``Assistant.find_all`` returns against the top 5 and top 10.

    python bench/lists.py                  # keyword-topical queries + the bundled list questions
    python bench/lists.py --limit-queries 40
    python bench/lists.py --bundled-only --judge   # the bundled lists judged by the local model

keyword_topical: "papers on <keyword>" within the query's venue (a filter, as a user would
give it), every paper of that venue listing the keyword as relevant. The queries are split
in two by their number: the even half calibrates the relevance bar (the bar with the best
mean F1 over a grid), the odd half is held out and reports precision, recall and F1 of the
returned set, of ``find_all`` at the bar in ``rag.answer.lists`` and of the top 5 and top 10 of
``Assistant.search``, averaged over queries. An empty set scores precision 0, or 1 when
nothing is relevant; recall is 1 when nothing is relevant.

bundled: the hand-written list questions of ``eval/questions/lists_icml2026.jsonl`` over the
19 bundled ICML 2026 papers (gold by title).
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _common import REPO, Query, indexes, write_json

from rag import Assistant
from rag.evaluation import Filters
from rag.evaluation import lists as listing

DATA = indexes.SHARED / "bench" / "ml" / "keyword_topical.jsonl"
BUNDLED_QUESTIONS = REPO / "eval" / "questions" / "lists_icml2026.jsonl"
MARGINS = (0.05, 0.1, 0.15, 0.2, 0.25, 0.3, 1.0)
GRID = [round(0.20 + 0.01 * i, 2) for i in range(71)]  # 0.20 ... 0.90
Retrieve = Callable[[Query], list[str]]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    payload: dict[str, Any] = {"benchmark": "lists", "bar": listing.LIST_MIN_SIMILARITY}
    if not args.bundled_only:
        payload["keyword_topical"] = keyword_topical(args)
    payload["bundled"] = bundled(args)
    payload["seconds"] = time.perf_counter() - started
    out = write_json(args.out, payload)
    print(f"\nwritten: {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bench/lists.py", description=__doc__.split("\n")[0])
    p.add_argument("--queries", type=Path, default=DATA, help="keyword_topical.jsonl")
    p.add_argument("--papers", type=Path, default=indexes.DISTRACTORS, help="ml_abstracts.jsonl")
    p.add_argument("--index-dir", type=Path, help="default: bench/out/needle-index")
    p.add_argument("--limit-queries", type=int, metavar="N", help="only the first N queries")
    p.add_argument("--bundled-only", action="store_true", help="only the bundled questions")
    p.add_argument(
        "--judge",
        action="store_true",
        help="the bundled lists judged by the local model (checks.judge_lists), ~5 min",
    )
    p.add_argument("--out", type=Path, default=indexes.BENCH_OUT / "lists.json")
    return p


# -- the 23k-paper index -------------------------------------------------------------------------
def keyword_topical(args: argparse.Namespace) -> dict[str, Any]:
    queries = [
        Query(r["qid"], f"papers on {r['keyword']}", tuple(r["gold"]), {"venue": r["venue_scope"]})
        for r in indexes.read_jsonl(args.queries)
    ][: args.limit_queries]
    calibration = [q for q in queries if int(q.qid.split("-")[-1]) % 2 == 0]
    held_out = [q for q in queries if int(q.qid.split("-")[-1]) % 2 == 1]
    index_dir, sources, prune = indexes.needle_sources(args.papers, None, args.index_dir)
    assistant = indexes.open_index(index_dir, sources, prune=prune)
    calibrated = calibrate(assistant, calibration)
    best, alone = calibrated["best"], calibrated["similarity_only"]
    bars = listing.Bars(best["similarity"], best["similarity_said"], best["margin"])
    print(f"\nkeyword_topical over {assistant.stats().papers} papers")
    print(f"calibration: {len(calibration)} queries")
    print(f"  best bars: {_bars(best)}, mean F1 {best['f1']:.3f}")
    print(f"  best similarity alone: {alone['similarity']:.2f}, mean F1 {alone['f1']:.3f}")
    print(f"  share of the relevant papers in the scored pool: {calibrated['pool_recall']:.3f}")
    print(f"  bars in rag.answer.lists: {_bars(vars(listing.Bars()))}")
    result = compare(assistant, held_out, "held-out (find_all at the calibrated bars)", bars)
    return {
        "papers": assistant.stats().papers,
        "calibration_queries": len(calibration),
        "held_out_queries": len(held_out),
        **calibrated,
        "held_out": result,
    }


def _bars(b: dict[str, Any]) -> str:
    return (
        f"similarity {b['similarity']:.2f}, or {b['similarity_said']:.2f} where the abstract "
        f"says the topic; at most {b['margin']:.2f} below the best"
    )


def calibrate(assistant: Assistant, queries: Sequence[Query]) -> dict[str, Any]:
    """The bars with the best mean F1 over the queries (and the best bar on the similarity
    alone), and the share of the relevant papers the scored pool holds (what no bar can
    list beyond)."""
    from tqdm import tqdm

    corpus = assistant.retriever.corpus
    vectors = assistant.retriever.vectors(corpus)
    per_query: list[tuple[int, np.ndarray, np.ndarray, np.ndarray]] = []
    pooled = relevant = 0
    for q in tqdm(queries, desc="calibration", unit=" q", file=sys.stderr, mininterval=5):
        topic = listing.list_topic(q.text)
        filters = Filters(venue=q.filters["venue"])
        found = listing.candidates_for(corpus, assistant.sentence_vectors, vectors, topic, filters)
        gold = set(q.relevant)
        hit = np.array([c.scored.hit.paper.paper_id in gold for c in found], dtype=bool)
        sim = np.array([c.relevance for c in found])
        said = np.array([c.says_topic for c in found], dtype=bool)
        per_query.append((len(gold), hit, sim, said))
        pooled += int(hit.sum())
        relevant += len(gold)
    sweep = [
        {
            "similarity": high,
            "similarity_said": low,
            "margin": margin,
            "f1": mean_f1_of(per_query, high, low, margin),
        }
        for high in GRID
        for low in GRID
        if low <= high
        for margin in MARGINS
    ]
    best = max(sweep, key=lambda r: r["f1"])
    alone = max(
        (r for r in sweep if r["similarity_said"] == r["similarity"] and r["margin"] == 1.0),
        key=_f1,
    )
    return {
        "best": best,
        "similarity_only": alone,
        "pool_recall": pooled / max(relevant, 1),
        "sweep": sweep,
    }


def _f1(row: dict[str, Any]) -> float:
    return float(row["f1"])


def mean_f1_of(
    per_query: Sequence[tuple[int, np.ndarray, np.ndarray, np.ndarray]],
    high: float,
    low: float,
    margin: float,
) -> float:
    """Mean F1 of the bars: similarity ``high``, or ``low`` where the abstract says the topic,
    and at most ``margin`` below the best paper admitted."""
    total = 0.0
    for gold, hit, sim, said in per_query:
        chosen = (sim >= high) | ((sim >= low) & said)
        if chosen.any():
            chosen &= sim >= sim[chosen].max() - margin
        returned, right = int(chosen.sum()), int((chosen & hit).sum())
        if returned and right:
            p, r = right / returned, right / gold
            total += 2 * p * r / (p + r)
    return total / max(len(per_query), 1)


def compare(
    assistant: Assistant,
    queries: Sequence[Query],
    label: str,
    bars: listing.Bars | None = None,
    judge: Any = None,
) -> dict[str, Any]:
    """Precision, recall and F1 of find_all's set (at ``bars``, else those of ``rag.answer.lists``)
    and of the top 5 and top 10."""
    from tqdm import tqdm

    def top(k: int) -> Retrieve:
        return lambda q: [
            h.paper.paper_id for h in assistant.search(q.text, k, parse=False, **q.filters)
        ]

    corpus = assistant.retriever.corpus
    vectors = assistant.retriever.vectors(corpus)

    def found(q: Query) -> list[str]:
        filters = Filters(venue=q.filters.get("venue"))
        papers = listing.find_all(
            corpus, assistant.sentence_vectors, vectors, q.text, filters, bars, judge
        )
        return [p.paper.paper_id for p in papers.papers]

    systems: dict[str, Retrieve] = {"find_all": found, "top-5": top(5), "top-10": top(10)}
    rows: dict[str, Any] = {}
    for name, retrieve in systems.items():
        pairs, seconds = [], []
        for q in tqdm(queries, desc=f"{label} {name}", unit=" q", file=sys.stderr, mininterval=5):
            t = time.perf_counter()
            pairs.append((set(q.relevant), set(retrieve(q))))
            seconds.append(time.perf_counter() - t)
        rows[name] = {**prf(pairs), "p50_seconds": sorted(seconds)[len(seconds) // 2]}
    print(f"\n{label}: {len(queries)} queries")
    print(table(rows))
    return rows


def prf(pairs: Sequence[tuple[set[str], set[str]]]) -> dict[str, float]:
    """Mean precision, recall and F1 over queries, and the mean size of the returned set."""
    p = [len(g & r) / len(r) if r else float(not g) for g, r in pairs]
    r_ = [len(g & r) / len(g) if g else 1.0 for g, r in pairs]
    f = [2 * a * b / (a + b) if a + b else 0.0 for a, b in zip(p, r_, strict=True)]
    n = len(pairs) or 1
    return {
        "precision": sum(p) / n,
        "recall": sum(r_) / n,
        "f1": sum(f) / n,
        "returned": sum(len(r) for _, r in pairs) / n,
    }


def table(rows: dict[str, Any]) -> str:
    head = ["system", "precision", "recall", "F1", "returned", "p50"]
    lines = ["  ".join(f"{h:>10}" for h in head)]
    for name, r in rows.items():
        cells = [name, *(f"{r[m]:.3f}" for m in ("precision", "recall", "f1"))]
        cells += [f"{r['returned']:.1f}", f"{r['p50_seconds'] * 1000:.0f} ms"]
        lines.append("  ".join(f"{c:>10}" for c in cells))
    return "\n".join(lines)


# -- the bundled papers --------------------------------------------------------------------------
def bundled(args: argparse.Namespace) -> dict[str, Any]:
    index_dir = indexes.BENCH_OUT / "lists-bundled-index"
    assistant = indexes.open_index(index_dir, [indexes.BUNDLED], prune=True)
    by_title = {p.paper_id: p.title for p in assistant.papers()}

    def gold(prefixes: Sequence[str]) -> tuple[str, ...]:
        return tuple(pid for pid, t in by_title.items() if any(t.startswith(x) for x in prefixes))

    rows = list(indexes.read_jsonl(BUNDLED_QUESTIONS))
    queries = [Query(r["id"], r["question"], gold(r["relevant"])) for r in rows]
    unrelated = {r["id"]: set(gold(r["unrelated"])) for r in rows}
    judge = assistant.judge("local") if args.judge else None
    label = "bundled list questions" + (", judged by the local model" if judge else "")
    result = compare(assistant, queries, label, judge=judge)
    listed_unrelated = sum(
        len(
            unrelated[q.qid]
            & {p.paper.paper_id for p in assistant.find_all(q.text, judge=judge).papers}
        )
        for q in queries
    )
    print(f"clearly unrelated papers listed: {listed_unrelated}")
    return {**result, "unrelated_listed": listed_unrelated}


if __name__ == "__main__":
    sys.exit(main())
