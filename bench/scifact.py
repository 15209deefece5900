"""SciFact (BEIR): claims against 5,183 biomedical abstracts, nDCG@10 per retriever.

    python bench/scifact.py                                  # all 809 training claims
    python bench/scifact.py --limit-queries 50 --corpus-limit 500   # a quick run

The corpus is indexed once into bench/out/scifact-index (a sliced corpus into
bench/out/scifact-index-slice) and reused by later runs. A claim's relevant abstracts are
its evidence_doc_id values, else its cited_doc_ids. The published figures are on the 300
test claims, which are not in ../shared; ours are on the training claims.
"""

from __future__ import annotations

import argparse
import ast
import csv
import io
import re
import sys
import time
import tokenize
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from _common import REPO, Query, index_info, indexes, retrievers_arg, run_queries, table, write_json

DATA = indexes.SHARED / "bench" / "scifact"
METRICS = ("ndcg@10", "recall@1", "recall@10", "mrr")
# nDCG@10 on BEIR SciFact (test claims), as published.
ANCHORS = {
    "bm25": "0.67-0.69",
    "dense": "0.65 MiniLM",
    "hybrid": "0.71 RRF",
}
ANCHOR_NOTE = (
    "published nDCG@10 (BEIR test claims): BM25 ~0.67-0.69, all-MiniLM-L6-v2 ~0.65, "
    "bge-small-en-v1.5 0.71, plain RRF of BM25 + MiniLM ~0.71"
)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    docs = list(read_corpus(args.data / "corpus.csv"))
    claims = read_claims(args.data / "claims_train.csv")[: args.limit_queries]
    docs = sliced(docs, claims, args.corpus_limit)
    index_dir = args.index_dir or indexes.BENCH_OUT / (
        "scifact-index" if args.corpus_limit is None else "scifact-index-slice"
    )
    papers = indexes.write_papers(index_dir / "papers.jsonl", docs)
    assistant = indexes.open_index(index_dir, [papers], prune=True)  # an index of its own
    result = run_queries(assistant, claims, args.retrievers, METRICS, "scifact")
    payload = {
        "benchmark": "scifact",
        "claims": "train",
        **index_info(assistant, index_dir),
        "corpus_limit": args.corpus_limit,
        **result,
        "published": ANCHOR_NOTE,
        "seconds": time.perf_counter() - started,
    }
    out = write_json(args.out or indexes.BENCH_OUT / _out_name(args), payload)
    print(f"SciFact: {result['queries']} claims over {payload['papers']} abstracts")
    print(table(result, METRICS, ANCHORS))
    print(ANCHOR_NOTE)
    print(f"written: {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bench/scifact.py", description=__doc__.split("\n")[0])
    p.add_argument(
        "--data", type=Path, default=DATA, help="folder with corpus.csv, claims_train.csv"
    )
    p.add_argument("--index-dir", type=Path, help="index folder (default: bench/out/scifact-index)")
    p.add_argument("--limit-queries", type=int, metavar="N", help="only the first N claims")
    p.add_argument(
        "--corpus-limit",
        type=int,
        metavar="N",
        help="index the first N abstracts plus every relevant one of the claims asked",
    )
    p.add_argument("--retrievers", type=retrievers_arg, default=["bm25", "dense", "hybrid"])
    p.add_argument("--out", type=Path, help="result JSON (default: bench/out/scifact.json)")
    return p  # fmt: skip


def _out_name(args: argparse.Namespace) -> str:
    quick = args.limit_queries is not None or args.corpus_limit is not None
    return "scifact-quick.json" if quick else "scifact.json"


def abstract_sentences(literal: str) -> list[str]:
    """The sentences of a corpus.csv abstract: a list literal, with or without commas.

    The file writes the list as numpy prints it (``['A.' 'B.']``), where a plain
    ``ast.literal_eval`` would glue the sentences together; each string token is read alone.
    """
    tokens = tokenize.generate_tokens(io.StringIO(literal).readline)
    try:
        strings = [ast.literal_eval(t.string) for t in tokens if t.type == tokenize.STRING]
    except (tokenize.TokenError, SyntaxError, ValueError):
        return [literal.strip("[]'\" ")]
    return [s.strip() for s in strings if isinstance(s, str) and s.strip()]


def read_corpus(path: Path) -> Iterator[dict[str, Any]]:
    csv.field_size_limit(2**31 - 1)
    with path.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            abstract = " ".join(abstract_sentences(row["abstract"]))
            yield {"id": row["doc_id"].strip(), "title": row["title"].strip(), "abstract": abstract}


def read_claims(path: Path) -> list[Query]:
    """One query per claim id: relevant = its evidence documents, else the documents it cites."""
    claims: dict[str, dict[str, Any]] = {}
    with path.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            claim = claims.setdefault(
                row["id"], {"text": row["claim"], "evidence": [], "cited": []}
            )
            if row["evidence_doc_id"].strip():
                claim["evidence"].append(row["evidence_doc_id"].strip())
            claim["cited"] += re.findall(r"\d+", row["cited_doc_ids"])  # "[1 2]", numpy-style
    return [
        Query(qid, c["text"], tuple(dict.fromkeys(c["evidence"] or c["cited"])))
        for qid, c in claims.items()
    ]


def sliced(docs: list[dict[str, Any]], claims: list[Query], limit: int | None) -> list[dict]:
    """The first ``limit`` documents plus every document relevant to the claims asked."""
    if limit is None:
        return docs
    wanted = {d for c in claims for d in c.relevant}
    return [d for i, d in enumerate(docs) if i < limit or d["id"] in wanted]


if __name__ == "__main__":
    sys.exit(main())
