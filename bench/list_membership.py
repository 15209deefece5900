"""List membership on the evaluation corpora: the product's lists against a learned judgement.

    python bench/list_membership.py --report dev    # fit on two dev corpora, report the third
    python bench/list_membership.py --report test   # fit on the dev corpora, report the test ones
    python bench/list_membership.py --reranker DIR  # the reranker to read with (default below)

The questions are each corpus's list questions with every member written down
(``eval/lists/NAME.jsonl``: ten lists and ten topics no paper covers, written from the
abstracts alone; and the ``list`` rows of ``eval/questions/NAME.jsonl``).

The learned judgement reads every candidate of a question (``rag.answer.lists.candidates_for``)
twice: the cosine of its closest abstract sentence to the topic, and a reranker's logit for
the question against its title and abstract (a cross-encoder trained by
``bench/train_crossencoder.py reranker``; not shipped). A logistic model of the two, fitted
on labelled candidates of the dev corpora only (plain gradient descent), admits a paper when
its probability reaches ``--threshold``; a listed paper also needs a reason sentence the
statement check keeps, as the product's lists do. On dev, each corpus is reported with the
model fitted on the other two. Beside it, in the same run: ``Assistant.find_all`` (the
product: cosine and words, ``rag.answer.lists.Bars``).

Printed per corpus: mean recall and precision over the lists (an empty answer has precision
0), lists answered exactly, absent topics for which some paper was listed, and the papers
listed rightly and wrongly over all questions.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from eval import indexes  # noqa: E402
from eval.corpora import CORPORA  # noqa: E402
from rag import Assistant  # noqa: E402
from rag.evaluation import CrossEncoder, Filters, rerank  # noqa: E402
from rag.evaluation import lists as listing  # noqa: E402

RERANKER = REPO / "bench" / "out" / "reranker" / "clean-int8"


@dataclass(frozen=True)
class Question:
    corpus: str
    qid: str
    text: str
    kind: str  # "list" or "absent"
    members: frozenset[str]


def questions(name: str) -> list[Question]:
    rows = []
    for path, prefix in ((REPO / "eval" / "lists" / f"{name}.jsonl", "lists"),
                         (REPO / "eval" / "questions" / f"{name}.jsonl", "questions")):  # fmt: skip
        for line in path.read_text(encoding="utf-8").splitlines():
            r = json.loads(line)
            if r["kind"] in ("list", "absent"):
                qid, members = f"{prefix}:{r['id']}", frozenset(r["relevant"])
                rows.append(Question(name, qid, r["question"], r["kind"], members))
    return rows


def open_corpus(name: str) -> Assistant:
    corpus = next(c for c in CORPORA if c.name == name)
    return indexes.open_index(indexes.BENCH_OUT / f"corpus-{name}", [corpus.path])


def readings(a: Assistant, qs: list[Question], reader: CrossEncoder) -> list[dict]:
    """Per question and candidate: relevance, reranker logit, whether it is a member, and
    (``scored``) what ``lists.reason`` needs to find the sentence that says why."""
    corpus = a.retriever.corpus
    vectors = a.retriever.vectors(corpus)
    rows = []
    for q in qs:
        topic = listing.list_topic(q.text)
        found = listing.candidates_for(corpus, a.sentence_vectors, vectors, topic, Filters())
        papers = [c.scored.hit.paper for c in found]
        logits = reader.logits([(q.text, rerank.passage(p, ())) for p in papers])
        for c, p, logit in zip(found, papers, logits, strict=True):
            rows.append({"q": (q.corpus, q.qid), "kind": q.kind, "pid": p.paper_id,
                         "member": p.paper_id in q.members, "relevance": c.relevance,
                         "logit": float(logit), "scored": c.scored, "topic": topic})  # fmt: skip
    return rows


def fit(rows: list[dict], steps: int = 3000, rate: float = 0.1) -> tuple[float, float, float]:
    """Logistic regression of membership on (relevance, logit): weights and bias."""
    x = np.array([[r["relevance"], r["logit"]] for r in rows])
    y = np.array([r["member"] for r in rows], dtype=float)
    mu, sd = x.mean(0), x.std(0) + 1e-9
    z = (x - mu) / sd
    w, b = np.zeros(2), 0.0
    for _ in range(steps):
        g = 1 / (1 + np.exp(-(z @ w + b))) - y
        w -= rate * (z.T @ g / len(y) + w / len(y))
        b -= rate * g.mean()
    weights = w / sd
    return float(weights[0]), float(weights[1]), float(b - (mu / sd) @ w)


def score(listed: dict[tuple[str, str], set[str]], qs: list[Question]) -> dict[str, float]:
    recall, precision, exact, absent_listed, wrong, right_total = [], [], 0, 0, 0, 0
    for q in qs:
        got = listed.get((q.corpus, q.qid), set())
        wrong += len(got - q.members)
        right_total += len(got & q.members)
        if q.kind == "absent":
            absent_listed += bool(got)
            continue
        right = len(got & q.members)
        recall.append(right / len(q.members))
        precision.append(right / len(got) if got else 0.0)
        exact += got == q.members
    absent = sum(q.kind == "absent" for q in qs)
    return {"lists": len(recall), "recall": float(np.mean(recall)),
            "precision": float(np.mean(precision)), "exact": exact,
            "absent": absent, "absent_listed": absent_listed,
            "right": right_total, "wrong": wrong}  # fmt: skip


def line(label: str, s: dict[str, float]) -> str:
    return (f"{label:<28} recall {s['recall']:.3f}  precision {s['precision']:.3f}  "
            f"exact {s['exact']}/{s['lists']}  absent topics listed "
            f"{s['absent_listed']}/{s['absent']}  papers listed right {s['right']}, "
            f"wrong {s['wrong']}")  # fmt: skip


def learned(a: Assistant, rows: list[dict], model: tuple[float, float, float],
            threshold: float) -> dict[tuple[str, str], set[str]]:  # fmt: skip
    """The papers the fitted model admits that have a reason sentence the check keeps."""
    w_rel, w_rer, bias = model
    out: dict[tuple[str, str], set[str]] = {}
    for r in rows:
        z = w_rel * r["relevance"] + w_rer * r["logit"] + bias
        if 1 / (1 + np.exp(-z)) < threshold:
            continue
        terms = listing.topic_terms(r["topic"])
        if listing.reason(r["scored"], a.sentence_vectors, terms):
            out.setdefault(r["q"], set()).add(r["pid"])
    return out


def run_report(split: str, reranker: Path, threshold: float) -> int:
    reader = CrossEncoder("reranker", reranker)
    dev = [c.name for c in CORPORA if c.split == "dev"]
    names = [c.name for c in CORPORA if c.split == split]
    per: dict[str, tuple[Assistant, list[Question], list[dict]]] = {}
    for name in {*dev, *names}:
        a = open_corpus(name)
        qs = questions(name)
        per[name] = (a, qs, readings(a, qs, reader))
    for name in names:
        a, qs, rows = per[name]
        fitted_on = [d for d in dev if d != name]
        model = fit([r for d in fitted_on for r in per[d][2]])
        product = {(q.corpus, q.qid): {p.paper.paper_id for p in a.find_all(q.text).papers}
                   for q in qs}  # fmt: skip
        weights = f"{model[0]:.3g} (cosine), {model[1]:.3g} (reranker), bias {model[2]:.3g}"
        print(f"{name} ({split}); the model fitted on {', '.join(fitted_on)}: {weights}")
        print(line("  find_all (the product)", score(product, qs)))
        print(line(f"  learned, p >= {threshold}", score(learned(a, rows, model, threshold), qs)))
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--report", choices=("dev", "test"), required=True)
    p.add_argument("--reranker", type=Path, default=RERANKER, help="a trained reranker folder")
    p.add_argument("--threshold", type=float, default=0.5, help="the learned model's bar")
    args = p.parse_args(argv)
    return run_report(args.report, args.reranker, args.threshold)


if __name__ == "__main__":
    sys.exit(main())
