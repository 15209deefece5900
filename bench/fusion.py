"""How to mix BM25 and dense scores: fixed weights, rank fusion and the learned model, on
six query sets at once.

    python bench/fusion.py                      # every set
    python bench/fusion.py --sets needle,tldr   # some of them

Each query is searched once; its candidate papers (every paper either side found in its
first ``retrieval.candidates`` chunks) keep their best chunk's BM25 score, cosine similarity
and features (``rag.index.ranking``), and each setting re-ranks those same candidates, so settings
differ only in how they mix. Weight 1.0 is BM25 alone and 0.0 dense alone over those
candidates; ``rrf`` is reciprocal-rank fusion of the two orders; ``learned`` is the model in
``rag/data/fusion.json`` (``bench/train_fusion.py``).

Sets, each scored on queries the model was not trained on: the bundled questions asked over
the needle index (``eval/run.py --needle``), questions about the same papers written without
their abstracts at hand (``eval/questions/icml2026_unseen.jsonl``), questions of the same
kind about 252 other papers of the ML list (``bench/fusion_test.jsonl``: a seeded random
sample, each question written from its abstract, none tested against search before it was
kept), the held-out half of the
ML TL;DR known-item set and the whole keyword-topic set (``bench/ml.py``, same index), and
the held-out half of the SciFact training claims (``bench/scifact.py``'s index). The other
halves of TL;DR and SciFact, and ``bench/fusion_train.jsonl``, are the training queries.
Candidates are cached per set in ``bench/out/fusion-candidates/`` for the index version
and this code.
"""

from __future__ import annotations

import argparse
import hashlib
import pickle
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
from rag.evaluation import (
    Candidates,
    Filters,
    FirstStage,
    FusionModel,
    bundled_model,
    candidates,
    fuse_scores,
    rerank,
)

SETS = ("needle", "unseen", "written_test", "tldr", "keyword", "scifact", "tune")
TRAINING = ("tldr", "scifact", "written")
MAIN = {"needle": "recall@1", "unseen": "recall@1", "written_test": "recall@1", "tldr": "recall@1"}
# else nDCG@10
WEIGHTS = (1.0, 0.8, 0.7, 0.6, 0.5, 0.4, 0.3, 0.0)
METRICS = ("recall@1", "recall@5", "mrr", "ndcg@10")
QUESTIONS = REPO / "eval" / "questions" / "icml2026.jsonl"
UNSEEN = REPO / "eval" / "questions" / "icml2026_unseen.jsonl"
WRITTEN = REPO / "bench" / "fusion_train.jsonl"
WRITTEN_TEST = REPO / "bench" / "fusion_test.jsonl"
CACHE = indexes.BENCH_OUT / "fusion-candidates"
RERANK_DEPTH = 30  # the most papers a reranker setting re-reads
RERANK_SETTINGS = (
    (10, 0.0),
    (20, 0.0),
    (20, 1.0),
    (20, 2.0),
    (20, 4.0),
    (20, 8.0),
    (10, 4.0),
    (30, 4.0),
)
PASSAGES: dict[str, tuple[str, dict[str, str]]] = {}  # per query: its text, top passages
LOGITS: dict[tuple[str, str], np.ndarray] = {}  # the reranker's logits of a learned top

Found = dict[str, Candidates]
Relevant = dict[str, list[str]]


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    started = time.perf_counter()
    model = bundled_model() if args.model is None else load_model(args.model)
    results: dict[str, Any] = {}
    for name in args.sets:
        found, relevant = (
            tuning_part(args.scifact_index)
            if name == "tune"
            else held_out_part(*collect(name, args.scifact_index))
        )  # fmt: skip
        results[name] = {"queries": len(found), "settings": sweep(found, relevant, model)}
        print(table(name, results[name]), flush=True)
    print(summary(results))
    if args.tune_reranker:
        tune_reranker(results["tune"]["settings"] if "tune" in results else {})
    if args.ask:
        results["ask"] = ask_recall([n for n in args.sets if n in ("needle", "unseen")])
    out = write_json(
        args.out or indexes.BENCH_OUT / "fusion.json",
        {"benchmark": "fusion", "sets": results, "seconds": time.perf_counter() - started},
    )
    print(f"written: {out.relative_to(REPO) if out.is_relative_to(REPO) else out}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bench/fusion.py", description=__doc__.split("\n")[0])
    p.add_argument("--sets", type=_sets, default=list(SETS), help=",".join(SETS) + " (all)")
    p.add_argument("--model", type=Path, help="a fusion model JSON (default: the bundled one)")
    p.add_argument(
        "--scifact-index",
        type=Path,
        default=indexes.BENCH_OUT / "scifact-index",
        help="SciFact index folder (default: bench/out/scifact-index)",
    )
    p.add_argument(
        "--ask",
        action="store_true",
        help="also ask the needle and unseen questions (extractive) with each fusion and count "
        "how often the paper asked for is among the papers the answer is written from",
    )
    p.add_argument(
        "--tune-reranker",
        action="store_true",
        help="with the tune set: write the reranker setting best on it (MRR) into the "
        "reranker's manifest (its fusion_weight) and print its depth",
    )
    p.add_argument("--out", type=Path, help="result JSON (default: bench/out/fusion.json)")
    return p  # fmt: skip


def _sets(value: str) -> list[str]:
    names = [n.strip() for n in value.split(",") if n.strip()]
    if not names or any(n not in SETS for n in names):
        raise argparse.ArgumentTypeError(f"sets are {', '.join(SETS)}, not {value!r}")
    return names


def load_model(path: Path) -> FusionModel:
    import json

    return FusionModel.from_json(json.loads(path.read_text(encoding="utf-8")))


# -- candidates and splits --------------------------------------------------------------------
def held_out(qid: str) -> bool:
    """Half of the TL;DR and SciFact queries, fixed by their ids, are never trained on."""
    return hashlib.sha1(qid.encode()).digest()[0] % 2 == 1


def tuning(qid: str) -> bool:
    """A fifth of the training queries, fixed by their ids, that the reranker is not trained
    on: its depth and weight are chosen on them (``bench/reranker_data.py``)."""
    return hashlib.sha1(qid.encode()).digest()[2] % 5 == 0


def held_out_part(found: Found, relevant: Relevant, name: str) -> tuple[Found, Relevant]:
    if name not in TRAINING:
        return found, relevant
    keep = [q for q in found if held_out(q)]
    return {q: found[q] for q in keep}, {q: relevant[q] for q in keep}


def tuning_part(scifact_index: Path | None) -> tuple[Found, Relevant]:
    """The training queries kept for tuning the reranker (``tuning``), all sets together."""
    found: Found = {}
    relevant: Relevant = {}
    for name in TRAINING:
        f, r, _ = collect(name, scifact_index)
        keep = [q for q in f if tuning(q) and (name == "written" or not held_out(q))]
        found.update({q: f[q] for q in keep})
        relevant.update({q: r[q] for q in keep})
    return found, relevant


def training_part(found: Found, relevant: Relevant, name: str) -> tuple[Found, Relevant]:
    keep = [q for q in found if name == "written" or not held_out(q)]
    return {q: found[q] for q in keep}, {q: relevant[q] for q in keep}


def collect(name: str, scifact_index: Path | None = None) -> tuple[Found, Relevant, str]:
    """Every query's candidates (with features) and relevant papers, cached per index version
    and code."""
    assistant, queries = (
        scifact_set(scifact_index) if name == "scifact" else LOADERS[name]()
    )  # fmt: skip
    key = f"{assistant.store.version()}|{_code_digest()}"
    path = CACHE / f"{name}.pkl"
    try:
        with path.open("rb") as f:
            cached = pickle.load(f)
        if cached["key"] == key:
            PASSAGES.update(cached["passages"])
            return cached["found"], cached["relevant"], name
    except (OSError, EOFError, KeyError, pickle.UnpicklingError, ModuleNotFoundError):
        pass  # none, or written by other code (a module it names has moved): build it again
    from tqdm import tqdm

    found, passages = {}, {}
    for q in tqdm(queries, desc=name, unit=" q", file=sys.stderr, mininterval=2):
        stage = assistant.retriever.first_stage(q.text, Filters(**q.filters), "hybrid", None)
        found[q.qid] = candidates(stage, q.text)
        passages[q.qid] = _passages(stage, found[q.qid], q.text)
    relevant = {q.qid: list(q.relevant) for q in queries}
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("wb") as f:
        pickle.dump({"key": key, "found": found, "relevant": relevant, "passages": passages}, f)
    PASSAGES.update(passages)
    return found, relevant, name


def _passages(stage: FirstStage, found: Candidates, query: str) -> tuple[str, dict[str, str]]:
    """The query and what the reranker reads of the learned fusion's top ``RERANK_DEPTH``."""
    if not found.paper_ids:
        return query, {}
    order = np.argsort(-bundled_model().score(found.features), kind="stable")[:RERANK_DEPTH]
    corpus = stage.corpus
    top = [found.paper_ids[i] for i in order]
    return query, {p: rerank.passage(corpus.papers[p], stage.evidence(p)) for p in top}


def _code_digest() -> str:
    """What the cached candidates depend on: the code that finds and scores them."""
    digest = hashlib.sha1()
    for module in (
        "index/lexical.py",
        "index/snapshot.py",
        "retrieve/search.py",
        "retrieve/fusion.py",
        "index/ranking.py",
        "retrieve/rerank.py",
    ):
        digest.update((REPO / "rag" / module).read_bytes())
    return digest.hexdigest()[:16]


# -- the settings -----------------------------------------------------------------------------
def settings(model: FusionModel | None) -> dict[str, Callable[[Candidates], np.ndarray]]:
    out: dict[str, Callable[[Candidates], np.ndarray]] = {
        f"score {w:.1f}": lambda c, w=w: fuse_scores(c.lexical, c.dense, w) for w in WEIGHTS
    }
    out["rrf"] = lambda c: 1 / (60 + _ranks(c.lexical)) + 1 / (60 + _ranks(c.dense))
    if model is not None:
        out["learned"] = lambda c: model.score(c.features)
    return out


def rank(found: Found, score: Callable[[Candidates], np.ndarray]) -> dict[str, list[str]]:
    return {
        qid: [c.paper_ids[i] for i in np.argsort(-score(c), kind="stable")[:10]]
        if c.paper_ids
        else []
        for qid, c in found.items()
    }


def reranked(found: Found, model: FusionModel, depth: int, weight: float) -> dict[str, list[str]]:
    """The learned order with its first ``depth`` papers re-scored by the reranker: its
    logit plus ``weight`` times the fused score."""
    encoder = rerank.model()
    out = {}
    for qid, c in found.items():
        if not c.paper_ids:
            out[qid] = []
            continue
        fused = model.score(c.features)
        order = np.argsort(-fused, kind="stable")
        query, passages = PASSAGES[qid]
        key = (qid, query)
        if key not in LOGITS:  # the deepest setting's pairs, read once per query
            deepest = order[:RERANK_DEPTH]
            LOGITS[key] = encoder.logits([(query, passages[c.paper_ids[i]]) for i in deepest])
        top = order[:depth]
        logits = LOGITS[key][:depth]
        new = rerank.combine(logits, fused[top].astype(np.float32), weight)
        ranked = [*top[np.argsort(-new, kind="stable")], *order[depth:]]
        out[qid] = [c.paper_ids[i] for i in ranked[:10]]
    return out


def sweep(found: Found, relevant: Relevant, model: FusionModel | None) -> dict[str, Any]:
    """Every setting's metrics over the same candidates."""
    runs = {name: rank(found, s) for name, s in settings(model).items()}
    if model is not None and _reranker_present():
        for depth, weight in RERANK_SETTINGS:
            runs[f"rerank {depth} w={weight}"] = reranked(found, model, depth, weight)
    return {
        name: metrics.mean_metrics(metrics.ranking_metrics(relevant, run, METRICS))
        for name, run in runs.items()
    }


def tune_reranker(settings: dict[str, Any]) -> None:
    """The best reranker setting on the tuning queries, its weight into the manifest."""
    import json

    tried = {n: v for n, v in settings.items() if n.startswith("rerank ")}
    if not tried:
        raise SystemExit("--tune-reranker needs --sets tune and the reranker's files")
    best = max(tried, key=lambda n: tried[n]["mrr"])
    depth, weight = best.split()[1], float(best.split("w=")[1])
    path = rerank.model().folder / "manifest.json"
    manifest = json.loads(path.read_text(encoding="utf-8"))
    path.write_text(json.dumps({**manifest, "fusion_weight": weight}, indent=1) + "\n")
    print(f"best on the tuning queries: {best} (MRR {tried[best]['mrr']:.3f}); "
          f"fusion_weight {weight} written to {path.relative_to(REPO)}; "
          f"retrieval.rerank_depth should be {depth}")  # fmt: skip


def _reranker_present() -> bool:
    return (rerank.model().folder / "manifest.json").exists()


def _ranks(scores: np.ndarray) -> np.ndarray:
    ranks: np.ndarray = np.argsort(np.argsort(-scores, kind="stable")) + 1
    return ranks


def table(name: str, result: dict[str, Any]) -> str:
    lines = [f"{name} ({result['queries']} queries)", "| setting | " + " | ".join(METRICS) + " |"]
    lines.append("| --- |" + " --- |" * len(METRICS))
    for setting, values in result["settings"].items():
        label = {"score 1.0": "BM25 only", "score 0.0": "dense only"}.get(setting, setting)
        lines.append(f"| {label} | " + " | ".join(f"{values[m]:.3f}" for m in METRICS) + " |")
    return "\n".join(lines)


def summary(results: dict[str, Any], fixed: str = "score 0.5") -> str:
    """The learned model against the fixed weight, on each set's main metric and R@5."""
    lines = ["| set | metric | fixed 0.5 | learned | change | R@5 fixed | R@5 learned |"]
    lines.append("| --- | --- | --- | --- | --- | --- | --- |")
    for name, result in results.items():
        metric = MAIN.get(name, "ndcg@10")
        old, new = result["settings"][fixed], result["settings"].get("learned")
        if new is None:
            continue
        lines.append(
            f"| {name} ({result['queries']}) | {metric} | {old[metric]:.3f} | {new[metric]:.3f}"
            f" | {new[metric] - old[metric]:+.3f} | {old['recall@5']:.3f}"
            f" | {new['recall@5']:.3f} |"
        )
    return "\n".join(lines)


def ask_recall(names: list[str]) -> dict[str, dict[str, float]]:
    """Share of questions whose paper is among the hits an answer is written from."""
    index_dir, _, _ = indexes.needle_sources()
    out: dict[str, dict[str, float]] = {}
    for fusion in ("score", "learned"):
        assistant = Assistant.open(
            index_dir=index_dir, llm="extractive", **{"retrieval.fusion": fusion}
        )
        lookup = PaperLookup(assistant.papers())
        for name in names:
            path = QUESTIONS if name == "needle" else UNSEEN
            found = []
            for q in load_questions(path):
                if not (q.needle and q.answerable):
                    continue
                answer = assistant.ask(q.question, history=_history(assistant, q), **q.filters)
                read = {h.paper.paper_id for h in answer.hits}
                found.append(all(p.paper_id in read for p in lookup.resolve(q, path)))
            out.setdefault(name, {})[fusion] = sum(found) / len(found)
            print(
                f"ask, {name}, {fusion} fusion: needed papers read for {sum(found)} of {len(found)}"
            )
    return out


def _history(assistant: Assistant, q: Any) -> list[Any]:
    """The answers to a question's earlier turns, as the app keeps them."""
    history: list[Any] = []
    for earlier in q.history:
        history.append(assistant.ask(earlier, history=list(history)))
    return history


# -- the query sets ---------------------------------------------------------------------------
def _needle_index() -> Assistant:
    index_dir, sources, prune = indexes.needle_sources()
    return indexes.open_index(index_dir, sources, prune=prune)


def needle(path: Path = QUESTIONS) -> tuple[Assistant, list[Query]]:
    """The questions marked for needle mode, follow-ups rewritten as the app does."""
    assistant = _needle_index()
    lookup = PaperLookup(assistant.papers())
    queries = []
    for q in load_questions(path):
        if not (q.needle and q.answerable):
            continue
        history = _history(assistant, q)
        # a follow-up is searched as the app rewrites it; a list question's own route
        # searches differently, so every other question is searched as asked
        text = assistant.ask(q.question, history=history).query if history else q.question
        filters, query = assistant.filters(text, venue=q.venue, year=q.year)
        relevant = tuple(p.paper_id for p in lookup.resolve(q, path))
        queries.append(Query(q.id, query, relevant, asdict(filters)))
    return assistant, queries


def _ml(name: str) -> tuple[Assistant, list[Query]]:
    return _needle_index(), ml.read_queries(ml.DATA, name)


def written(path: Path = WRITTEN) -> tuple[Assistant, list[Query]]:
    """Questions about papers of the ML list (not the bundled ones): training ones, or
    with ``WRITTEN_TEST`` the held-out ones."""
    rows = indexes.read_jsonl(path)
    return _needle_index(), [Query(r["id"], r["question"], (r["paper"],)) for r in rows]


def scifact_set(index_dir: Path | None = None) -> tuple[Assistant, list[Query]]:
    data = scifact.DATA
    index_dir = index_dir or indexes.BENCH_OUT / "scifact-index"
    papers = indexes.write_papers(
        index_dir / "papers.jsonl", list(scifact.read_corpus(data / "corpus.csv"))
    )
    assistant = indexes.open_index(index_dir, [papers], prune=True)
    return assistant, scifact.read_claims(data / "claims_train.csv")


LOADERS: dict[str, Callable[[], tuple[Assistant, list[Query]]]] = {
    "needle": needle,
    "unseen": lambda: needle(UNSEEN),
    "tldr": lambda: _ml("tldr"),
    "keyword": lambda: _ml("keyword"),
    "scifact": scifact_set,
    "written": written,
    "written_test": lambda: written(WRITTEN_TEST),
}


if __name__ == "__main__":
    sys.exit(main())
