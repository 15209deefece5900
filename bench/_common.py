"""What the benchmarks share: the repo on sys.path, searching every query, the table, the JSON.

A benchmark is: a corpus written once as a paper list and indexed once (``eval.indexes``),
queries with their relevant paper ids, every retriever searched over every query, ranx
metrics per retriever, a printed table and a JSON file under ``bench/out/``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

import rag  # noqa: E402,F401  (the offline switches, before anything imports a model)
from eval import indexes, metrics  # noqa: E402
from eval.runner import RETRIEVERS  # noqa: E402
from rag import Assistant  # noqa: E402

DEPTH = 10


@dataclass(frozen=True)
class Query:
    """A benchmark query: its text, the filters a user would give, and its relevant papers."""

    qid: str
    text: str
    relevant: tuple[str, ...]
    filters: dict[str, Any] = field(default_factory=dict)


def retrievers_arg(value: str) -> list[str]:
    modes = [m.strip() for m in value.split(",") if m.strip()]
    if not modes or any(m not in RETRIEVERS for m in modes):
        raise argparse.ArgumentTypeError(f"retrievers are bm25, dense and hybrid, not {value!r}")
    return modes


def run_queries(
    assistant: Assistant,
    queries: Sequence[Query],
    retrievers: Sequence[str],
    metric_names: Sequence[str],
    label: str,
) -> dict[str, Any]:
    """Search every query with every retriever; ranx metrics and search latency per retriever."""
    from tqdm import tqdm

    indexed = {p.paper_id for p in assistant.papers()}
    relevant = {q.qid: [p for p in q.relevant if p in indexed] for q in queries}
    results: dict[str, Any] = {}
    for mode in retrievers:
        ranked: dict[str, list[str]] = {}
        seconds: list[float] = []
        for q in tqdm(queries, desc=f"{label} {mode}", unit=" q", file=sys.stderr, mininterval=2):
            assistant.embedder.forget_queries()  # each retriever embeds the query itself
            started = time.perf_counter()
            hits = assistant.search(q.text, DEPTH, mode=mode, parse=False, **q.filters)
            seconds.append(time.perf_counter() - started)
            ranked[q.qid] = [h.paper.paper_id for h in hits]
        per_query = metrics.ranking_metrics(relevant, ranked, metric_names)
        results[mode] = {
            **metrics.mean_metrics(per_query),
            "queries": len(per_query),
            "search_seconds": metrics.percentiles(seconds),
        }
    return {
        "queries": len(queries),
        "queries_without_indexed_relevant": sum(not r for r in relevant.values()),
        "relevant_not_indexed": sum(len(q.relevant) - len(relevant[q.qid]) for q in queries),
        "retrievers": results,
    }


def table(
    result: Mapping[str, Any],
    metric_names: Sequence[str],
    anchors: Mapping[str, str] | None = None,
) -> str:
    """The retrievers side by side, with published figures beside ours where given."""
    head = ["retriever", *metric_names, "search p50", "search p95"]
    if anchors:
        head.append("published")
    lines = ["  ".join(f"{h:>11}" for h in head)]
    for mode, r in result["retrievers"].items():
        cells = [mode, *(f"{r.get(m, 0.0):.3f}" for m in metric_names)]
        cells += [_ms(r["search_seconds"]["p50"]), _ms(r["search_seconds"]["p95"])]
        if anchors:
            cells.append(anchors.get(mode, ""))
        lines.append("  ".join(f"{c:>11}" for c in cells))
    return "\n".join(lines)


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f} ms"


def write_json(path: Path, payload: Mapping[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return path


def index_info(assistant: Assistant, index_dir: Path) -> dict[str, Any]:
    stats = assistant.stats()
    return {"index": str(index_dir), "papers": stats.papers, "chunks": stats.chunks}


__all__ = [
    "REPO",
    "RETRIEVERS",
    "Query",
    "index_info",
    "indexes",
    "retrievers_arg",
    "run_queries",
    "table",
    "write_json",
]
