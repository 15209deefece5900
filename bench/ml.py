"""ML abstracts: known-item (TL;DR) and topical (keyword) search over 22,981 papers.

    python bench/ml.py                                         # both query sets, whole corpus
    python bench/ml.py --limit-queries 50 --corpus-limit 1000  # a quick run

tldr_known_item: an author's TL;DR as the query, its one paper as the answer.
keyword_topical: "papers on <keyword>" within the query's venue (given as a filter, as a
user would), every paper of that venue listing the keyword as relevant.

Only title and abstract are embedded and searched, never the TL;DR (it is the query; the
readers do not take it) nor the keywords (they define the relevant set; kept as metadata,
never used as a filter here). The whole corpus shares bench/out/needle-index with
``eval/run.py --needle`` (the 19 bundled ICML 2026 papers are extra distractors); a
sliced corpus gets bench/out/ml-index-slice.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from _common import REPO, Query, index_info, indexes, retrievers_arg, run_queries, table, write_json

DATA = indexes.SHARED / "bench" / "ml"
METRICS = ("recall@1", "recall@10", "mrr", "ndcg@10")
SETS = ("tldr", "keyword")


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    query_sets = {name: read_queries(args.data, name)[: args.limit_queries] for name in args.sets}
    index_dir, sources, prune = corpus_sources(args, query_sets)
    assistant = indexes.open_index(index_dir, sources, prune=prune)
    payload: dict[str, Any] = {
        "benchmark": "ml",
        **index_info(assistant, index_dir),
        "corpus_limit": args.corpus_limit,
    }
    for name, queries in query_sets.items():
        payload[name] = run_queries(assistant, queries, args.retrievers, METRICS, name)
    payload["seconds"] = time.perf_counter() - started
    out = write_json(args.out or indexes.BENCH_OUT / _out_name(args), payload)
    for name in query_sets:
        result = payload[name]
        print(f"\n{name}: {result['queries']} queries over {payload['papers']} papers")
        print(table(result, METRICS))
    print(f"\nwritten: {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bench/ml.py", description=__doc__.split("\n")[0])
    p.add_argument("--data", type=Path, default=DATA, help="folder with the query files")
    p.add_argument("--papers", type=Path, default=indexes.DISTRACTORS, help="ml_abstracts.jsonl")
    p.add_argument(
        "--index-dir",
        type=Path,
        help="index folder (default: bench/out/needle-index, shared with eval --needle)",
    )
    p.add_argument("--sets", type=_sets, default=list(SETS), help="tldr,keyword (default: both)")
    p.add_argument("--limit-queries", type=int, metavar="N", help="only the first N of each set")
    p.add_argument(
        "--corpus-limit",
        type=int,
        metavar="N",
        help="index the first N papers plus every relevant one of the queries asked",
    )
    p.add_argument("--retrievers", type=retrievers_arg, default=["bm25", "dense", "hybrid"])
    p.add_argument("--out", type=Path, help="result JSON (default: bench/out/ml.json)")
    return p  # fmt: skip


def _sets(value: str) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names or any(n not in SETS for n in names):
        raise argparse.ArgumentTypeError(f"query sets are tldr and keyword, not {value!r}")
    return names


def _out_name(args: argparse.Namespace) -> str:
    quick = args.limit_queries is not None or args.corpus_limit is not None
    return "ml-quick.json" if quick else "ml.json"


def read_queries(data: Path, name: str) -> list[Query]:
    if name == "tldr":
        return [
            Query(r["qid"], r["query"], tuple(r["gold"]))
            for r in indexes.read_jsonl(data / "tldr_known_item.jsonl")
        ]
    return [
        Query(r["qid"], f"papers on {r['keyword']}", tuple(r["gold"]), {"venue": r["venue_scope"]})
        for r in indexes.read_jsonl(data / "keyword_topical.jsonl")
    ]


def corpus_sources(
    args: argparse.Namespace, query_sets: dict[str, list[Query]]
) -> tuple[Path, list[Path], bool]:
    """The whole corpus (the needle index), or a slice holding every relevant paper."""
    if args.corpus_limit is None:
        return indexes.needle_sources(args.papers, None, args.index_dir)
    wanted = {pid for queries in query_sets.values() for q in queries for pid in q.relevant}
    lines = (
        line
        for i, line in enumerate(indexes.jsonl_lines(args.papers))
        if i < args.corpus_limit or json.loads(line)["id"] in wanted
    )
    index_dir = args.index_dir or indexes.BENCH_OUT / "ml-index-slice"
    return index_dir, [indexes.write_lines(index_dir / "papers.jsonl", lines)], True


if __name__ == "__main__":
    sys.exit(main())
