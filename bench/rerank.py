"""Does a second-stage reranker pay for its latency on top of hybrid retrieval?

    RAG_CACHE_DIR=/tmp/ragcache python bench/rerank.py --mpnet /tmp/mpnet-model

First stage: ``Assistant.search`` (hybrid BM25 + MiniLM), top ``--depth`` papers. Second
stage, measured on the same candidates:

* mpnet: all-mpnet-base-v2 (bi-encoder) cosine of the query to each candidate's
  title + abstract, encoded at query time, min-max normalised over the candidates and mixed
  with the first-stage score: ``alpha * mpnet + (1 - alpha) * first`` (alpha 1 = pure rerank).
* llm: the local GGUF model as a listwise reranker of the top 5, on a handful of queries
  (latency, and whether it put the relevant paper first).

Data: the needle index (single-paper ICML 2026 questions, top-1 and MRR) and, if built,
the SciFact index (training claims, nDCG@10 with ranx).
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np
from _common import REPO, indexes, write_json

from eval import metrics
from rag import Assistant

QUESTIONS = REPO / "eval" / "questions" / "icml2026.jsonl"
SCIFACT = indexes.SHARED / "bench" / "scifact"


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    from sentence_transformers import SentenceTransformer

    mpnet = SentenceTransformer(str(args.mpnet), device="cpu")
    mpnet.max_seq_length = args.max_seq_length
    mpnet.encode(["warm up"], normalize_embeddings=True)
    payload: dict[str, Any] = {
        "depth": args.depth,
        "alphas": args.alphas,
        "max_seq_length": args.max_seq_length,
    }
    if args.needle_index.exists():
        payload["needle"] = needle_bench(args, mpnet)
    if args.scifact_index.exists() and args.scifact_queries > 0:
        payload["scifact"] = scifact_bench(args, mpnet)
    if args.llm_queries > 0 and "needle" in payload:
        payload["llm"] = llm_bench(args, payload["needle"].pop("_runs"))
    payload.get("needle", {}).pop("_runs", None)
    report(payload)
    out = write_json(args.out, payload)
    print(f"written: {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    out = indexes.BENCH_OUT
    p = argparse.ArgumentParser(prog="bench/rerank.py", description=__doc__.split("\n")[0])
    p.add_argument(
        "--mpnet", type=Path, default=Path("/tmp/mpnet-model"), help="all-mpnet-base-v2 folder"
    )
    p.add_argument("--needle-index", type=Path, default=out / "needle-index")
    p.add_argument("--scifact-index", type=Path, default=out / "scifact-index")
    p.add_argument(
        "--scifact-queries",
        type=int,
        default=100,
        metavar="N",
        help="first N training claims (0: skip)",
    )
    p.add_argument("--needle-limit", type=int, metavar="N", help="first N needle questions")
    p.add_argument("--depth", type=int, default=10, help="candidates reranked per query")
    p.add_argument(
        "--alphas", type=lambda s: [float(x) for x in s.split(",")], default=[1.0, 0.5, 0.3]
    )
    p.add_argument(
        "--llm-queries",
        type=int,
        default=3,
        metavar="N",
        help="needle queries for the LLM (0: skip)",
    )
    p.add_argument("--max-seq-length", type=int, default=256, help="mpnet tokens per text")
    p.add_argument("--llm-top", type=int, default=5)
    p.add_argument("--out", type=Path, default=out / "rerank.json")
    return p  # fmt: skip


# -- the two stages -----------------------------------------------------------------------
def first_stage(assistant: Assistant, text: str, depth: int) -> tuple[list[Any], float]:
    started = time.perf_counter()
    hits = assistant.search(text, depth, parse=False)
    return hits, time.perf_counter() - started


def mpnet_scores(mpnet: Any, text: str, hits: list[Any]) -> tuple[np.ndarray, float]:
    """Cosine of the query to each hit's title + abstract, and the seconds it took."""
    started = time.perf_counter()
    docs = [f"{h.paper.title}. {h.paper.abstract}" for h in hits]
    vectors = mpnet.encode([text, *docs], normalize_embeddings=True, batch_size=16)
    return vectors[1:] @ vectors[0], time.perf_counter() - started


def mixed_order(first: np.ndarray, second: np.ndarray, alpha: float) -> list[int]:
    """Candidate positions, best first, by alpha * second + (1 - alpha) * first (min-max)."""
    mixed = alpha * _minmax(second) + (1 - alpha) * _minmax(first)
    return sorted(range(len(mixed)), key=lambda i: (-mixed[i], i))


def _minmax(x: np.ndarray) -> np.ndarray:
    x = np.asarray(x, dtype=float)
    spread = x.max() - x.min() if len(x) else 0.0
    return (x - x.min()) / spread if spread > 0 else np.zeros_like(x)


def rerank_runs(
    assistant: Assistant, mpnet: Any, queries: list[tuple[str, str]], depth: int, label: str
) -> dict[str, Any]:
    """First-stage hits, mpnet cosines and timings per query id."""
    runs: dict[str, Any] = {}
    for n, (qid, text) in enumerate(queries, 1):
        hits, first_s = first_stage(assistant, text, depth)
        cos, second_s = mpnet_scores(mpnet, text, hits) if hits else (np.zeros(0), 0.0)
        runs[qid] = {
            "text": text,
            "hits": hits,
            "cos": cos,
            "first_s": first_s,
            "second_s": second_s,
        }
        if n % 10 == 0 or n == len(queries):
            print(f"  {label}: {n}/{len(queries)}", file=sys.stderr, flush=True)
    return runs


def ranked_ids(runs: dict[str, Any], alpha: float | None) -> dict[str, list[str]]:
    """Paper ids per query: first stage (alpha None) or mixed with mpnet."""
    out: dict[str, list[str]] = {}
    for qid, r in runs.items():
        ids = [h.paper.paper_id for h in r["hits"]]
        if alpha is None or not ids:
            out[qid] = ids
            continue
        first = np.array([h.score for h in r["hits"]])
        out[qid] = [ids[i] for i in mixed_order(first, r["cos"], alpha)]
    return out


def latency(runs: dict[str, Any]) -> dict[str, Any]:
    return {
        "first_stage_s": metrics.percentiles(r["first_s"] for r in runs.values()),
        "mpnet_rerank_s": metrics.percentiles(r["second_s"] for r in runs.values()),
    }


# -- needle: single-paper ICML 2026 questions ---------------------------------------------
def needle_queries(assistant: Assistant) -> list[tuple[str, str, str]]:
    """(qid, question, relevant paper id) for answerable single-paper questions."""
    import json

    corpus = assistant.retriever.corpus
    papers = [p for p in corpus.papers.values() if p.venue == "ICML" and p.year == 2026]

    def resolve(ref: Any) -> str | None:
        if isinstance(ref, dict):
            needle = ref["contains"]
        elif ref.startswith("contains:"):
            needle = ref[len("contains:") :]
        else:
            return ref.removeprefix("id:")
        found = [p for p in papers if needle.lower() in f"{p.title} {p.abstract}".lower()]
        return found[0].paper_id if found else None

    out = []
    for line in QUESTIONS.read_text(encoding="utf-8").splitlines():
        if not line.strip():
            continue
        row = json.loads(line)
        single = len(row.get("relevant", [])) == 1
        if not row.get("answerable", True) or row.get("history") or not single:
            continue
        pid = resolve(row["relevant"][0])
        if pid:
            out.append((row.get("id") or row["question"], row["question"], pid))
    return out


def needle_bench(args: argparse.Namespace, mpnet: Any) -> dict[str, Any]:
    assistant = Assistant.open(index_dir=args.needle_index, llm="extractive")
    queries = needle_queries(assistant)[: args.needle_limit]
    rel = {qid: pid for qid, _, pid in queries}
    runs = rerank_runs(assistant, mpnet, [(q, t) for q, t, _ in queries], args.depth, "needle")

    def scores(ranked: dict[str, list[str]]) -> dict[str, Any]:
        ranks = [ranked[q].index(rel[q]) + 1 if rel[q] in ranked[q] else None for q in ranked]
        return {
            "top1": sum(r == 1 for r in ranks),
            "mrr": float(np.mean([1 / r if r else 0.0 for r in ranks])),
            "in_candidates": float(np.mean([r is not None for r in ranks])),
        }

    variants = {"hybrid": scores(ranked_ids(runs, None))}
    for a in args.alphas:
        variants[f"+mpnet a={a:g}"] = scores(ranked_ids(runs, a))
    for r, (_, _, pid) in zip(runs.values(), queries, strict=True):
        r["relevant"] = pid
    return {"queries": len(queries), "variants": variants, **latency(runs), "_runs": runs}


# -- SciFact: training claims, nDCG@10 ----------------------------------------------------
def scifact_bench(args: argparse.Namespace, mpnet: Any) -> dict[str, Any]:
    sys.path.insert(0, str(Path(__file__).parent))
    from scifact import read_claims

    claims = read_claims(SCIFACT / "claims_train.csv")[: args.scifact_queries]
    assistant = Assistant.open(index_dir=args.scifact_index, llm="extractive")
    indexed = {p.paper_id for p in assistant.papers()}
    relevant = {c.qid: [p for p in c.relevant if p in indexed] for c in claims}
    runs = rerank_runs(assistant, mpnet, [(c.qid, c.text) for c in claims], args.depth, "scifact")
    names = ("ndcg@10", "recall@10", "mrr")

    def scores(ranked: dict[str, list[str]]) -> dict[str, float]:
        return metrics.mean_metrics(metrics.ranking_metrics(relevant, ranked, names))

    variants = {"hybrid": scores(ranked_ids(runs, None))}
    for a in args.alphas:
        variants[f"+mpnet a={a:g}"] = scores(ranked_ids(runs, a))
    return {"queries": len(claims), "papers": len(indexed), "variants": variants, **latency(runs)}


# -- the local LLM as a listwise reranker --------------------------------------------------
LISTWISE = (
    "Rank the papers by how well they answer the question. Reply with the paper numbers, "
    "most relevant first, separated by commas, and nothing else.\n\nQuestion: {q}\n\n{papers}"
)


def llm_bench(args: argparse.Namespace, runs: dict[str, Any]) -> dict[str, Any]:
    """Listwise rerank of the top few on a handful of needle queries: misses first, then hits."""
    from rag.evaluation import local_llm, stream_chat
    from rag.settings import get_settings

    llm = local_llm(get_settings().llm)
    done = [r for r in runs.values() if r["hits"]]
    misses = [r for r in done if r["hits"][0].paper.paper_id != r["relevant"]]
    hits_ = [r for r in done if r["hits"][0].paper.paper_id == r["relevant"]]
    n_miss = min(len(misses), (args.llm_queries + 1) // 2)
    chosen = misses[:n_miss] + hits_[: args.llm_queries - n_miss]
    rows = []
    for r in chosen:
        top = r["hits"][: args.llm_top]
        papers = "\n\n".join(
            f"[{i}] {h.paper.title}. {h.paper.abstract[:450]}" for i, h in enumerate(top, 1)
        )
        prompt = LISTWISE.format(q=r["text"], papers=papers)
        started = time.perf_counter()
        first_token = None
        reply = ""
        for piece in stream_chat(llm, [{"role": "user", "content": prompt}]):
            first_token = first_token or time.perf_counter() - started
            reply += piece
        seconds = time.perf_counter() - started
        order = [int(x) - 1 for x in re.findall(r"\d+", reply) if 0 < int(x) <= len(top)]
        llm_top1 = top[order[0]].paper.paper_id if order else top[0].paper.paper_id
        ids = [h.paper.paper_id for h in top]
        rows.append({
            "question": r["text"],
            "first_stage_rank": ids.index(r["relevant"]) + 1 if r["relevant"] in ids else None,
            "llm_top1_correct": llm_top1 == r["relevant"],
            "reply": reply.strip()[:80],
            "prompt_chars": len(prompt),
            "first_token_s": first_token,
            "seconds": seconds,
        })  # fmt: skip
        print(f"  llm: {len(rows)}/{len(chosen)} {seconds:.1f} s", file=sys.stderr, flush=True)
    seconds = metrics.percentiles(x["seconds"] for x in rows)
    return {"top": args.llm_top, "rows": rows, "seconds": seconds}


# -- the table -----------------------------------------------------------------------------
def report(payload: dict[str, Any]) -> None:
    tables = {
        "needle": ("top1", "mrr", "in_candidates"),
        "scifact": ("ndcg@10", "recall@10", "mrr"),
    }
    for name, cols in tables.items():
        if name not in payload:
            continue
        b = payload[name]
        print(f"\n{name}: {b['queries']} queries, top-{payload['depth']} reranked")
        print("  ".join(f"{h:>14}" for h in ("variant", *cols)))
        for variant, m in b["variants"].items():
            cells = [f"{m[c]}/{b['queries']}" if c == "top1" else f"{m[c]:.3f}" for c in cols]
            print("  ".join(f"{c:>14}" for c in (variant, *cells)))
        f, s = b["first_stage_s"], b["mpnet_rerank_s"]
        print(
            f"latency/query: first stage p50 {_ms(f['p50'])} p95 {_ms(f['p95'])}; "
            f"+mpnet rerank p50 {_ms(s['p50'])} p95 {_ms(s['p95'])}"
        )
    if "llm" in payload:
        rows = payload["llm"]["rows"]
        print(f"\nlocal LLM listwise rerank of top {payload['llm']['top']} ({len(rows)} queries):")
        for x in rows:
            print(
                f"  {x['seconds']:6.1f} s (first token {x['first_token_s'] or 0:.1f} s, "
                f"{x['prompt_chars']} prompt chars)  first-stage rank {x['first_stage_rank']}  "
                f"llm top-1 correct {x['llm_top1_correct']}  reply {x['reply']!r}"
            )


def _ms(seconds: float | None) -> str:
    return "-" if seconds is None else f"{seconds * 1000:.0f} ms"


if __name__ == "__main__":
    sys.exit(main())
