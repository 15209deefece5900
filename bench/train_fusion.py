"""Train the learned fusion (``rag/data/fusion.json``) on training queries only.

    python bench/train_fusion.py                 # fit, cross-validate, write the model
    python bench/train_fusion.py --dry-run       # cross-validate only

Training queries: the half of the ML TL;DR known-item set and the half of the SciFact
training claims that ``bench/fusion.py`` does not score (split by query id), and the
questions of ``bench/fusion_train.jsonl``, written about papers of the ML list. Every
candidate paper of a query is a row of ``rag.index.ranking.FEATURES``, labelled by whether the
query asks for it; a logistic regression (scikit-learn) on the standardised features is
fitted, its coefficients written as JSON, and ``bench/fusion.py`` compares it with the
fixed weights on the held-out sets. Grouped 5-fold cross-validation over the training
queries picks the regularisation and compares the model with gradient-boosted trees.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import fusion
import numpy as np
from _common import REPO, metrics

from rag.evaluation import FEATURES, MODEL, FusionModel

C_VALUES = (0.01, 0.1, 1.0, 10.0)


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    data = training_data(args.scifact_index)
    print(f"training queries: {len(data.qids)} with a relevant candidate ({data.counts})")
    scores = {f"listwise C={c}": cross_validate(data, listwise(c)) for c in C_VALUES}
    scores["pointwise logistic"] = cross_validate(data, pointwise)
    scores["gradient-boosted trees"] = cross_validate(data, trees)
    scores["fixed weight 0.5"] = evaluate(data, data.qids, fusion.settings(None)["score 0.5"])
    for name, value in scores.items():
        print(f"  {name:24s} " + "  ".join(f"{m} {value[m]:.3f}" for m in fusion.METRICS))
    best = max(C_VALUES, key=lambda c: scores[f"listwise C={c}"]["mrr"])
    model = listwise(best)(data, np.ones(len(data.qids), dtype=bool))
    print(f"chosen C={best}; weights: " + ", ".join(
        f"{f} {w:+.2f}" for f, w in zip(FEATURES, model.weights, strict=True)))  # fmt: skip
    if not args.dry_run:
        payload = {**model.to_json(), "trained_on": data.counts, "regularisation_c": best}
        args.out.write_text(json.dumps(payload, indent=1) + "\n", encoding="utf-8")
        shown = args.out.relative_to(REPO) if args.out.is_relative_to(REPO) else args.out
        print(f"written: {shown}")
    return 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="bench/train_fusion.py", description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path, default=MODEL, help="model JSON (default: the bundled one)")
    p.add_argument("--dry-run", action="store_true", help="cross-validate without writing")
    p.add_argument(
        "--scifact-index",
        type=Path,
        default=fusion.indexes.BENCH_OUT / "scifact-index",
        help="SciFact index folder (default: bench/out/scifact-index)",
    )
    return p  # fmt: skip


@dataclass
class Training:
    """The training queries' candidates: features, labels, query numbers and weights."""

    found: fusion.Found
    relevant: fusion.Relevant
    qids: list[str]
    sources: list[str]  # each query's training set
    x: np.ndarray = field(init=False)
    y: np.ndarray = field(init=False)
    group: np.ndarray = field(init=False)  # each row's query, as a position in qids
    weight: np.ndarray = field(init=False)  # each query's weight: every set weighs the same

    def __post_init__(self) -> None:
        found, qids = self.found, self.qids
        self.x = np.concatenate([found[q].features for q in qids])
        labels = [[p in self.relevant[q] for p in found[q].paper_ids] for q in qids]
        self.y = np.concatenate(labels).astype(int)
        self.group = np.concatenate([[i] * len(found[q].paper_ids) for i, q in enumerate(qids)])
        size = {s: self.sources.count(s) for s in set(self.sources)}
        self.weight = np.array([len(qids) / len(size) / size[s] for s in self.sources])

    @property
    def counts(self) -> dict[str, int]:
        return {s: self.sources.count(s) for s in dict.fromkeys(self.sources)}


def training_data(scifact_index: Path) -> Training:
    parts = {n: fusion.training_part(*fusion.collect(n, scifact_index)) for n in fusion.TRAINING}
    found = {q: c for f, _ in parts.values() for q, c in f.items()}
    relevant = {q: r for _, rel in parts.values() for q, r in rel.items()}
    source = {q: n for n, (f, _) in parts.items() for q in f}
    qids = [q for q in found if set(relevant[q]) & set(found[q].paper_ids)]
    return Training(found, relevant, qids, [source[q] for q in qids])


Fit = Callable[[Training, np.ndarray], Callable[[np.ndarray], np.ndarray]]


def listwise(c: float) -> Callable[[Training, np.ndarray], FusionModel]:
    """A linear score whose softmax over each query's candidates puts the most probability
    on its relevant papers (a conditional logit), L2-penalised by 1/c; then a sigmoid fitted
    to the scores, so a hit's score reads as a probability."""

    def fit(data: Training, queries: np.ndarray) -> FusionModel:
        from scipy.optimize import minimize

        rows = queries[data.group]
        x, y, group = data.x[rows], data.y[rows], data.group[rows]
        mean, scale = x.mean(axis=0), x.std(axis=0)
        scale[scale == 0] = 1.0
        z = (x - mean) / scale
        _, group = np.unique(group, return_inverse=True)
        weight = data.weight[queries]
        relevant_count = np.bincount(group, weights=y)

        def loss(w: np.ndarray) -> tuple[float, np.ndarray]:
            s = z @ w
            top = np.full(len(weight), -np.inf)
            np.maximum.at(top, group, s)
            e = np.exp(s - top[group])
            total = np.bincount(group, weights=e)
            log_norm = np.log(total) + top
            # minus the mean log-probability of the query's relevant papers
            per_query = log_norm - np.bincount(group, weights=s * y) / relevant_count
            p = e / total[group]
            grad_rows = p - y / relevant_count[group]
            grad = (grad_rows * weight[group]) @ z
            value = float(per_query @ weight) + 0.5 / c * float(w @ w)
            return value, grad + w / c

        w = minimize(loss, np.zeros(z.shape[1]), jac=True, method="L-BFGS-B").x
        scores = z @ w
        a, b = _calibrate(scores, y)
        return FusionModel(FEATURES, mean, scale, w * a, b)

    return fit


def _calibrate(scores: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    from sklearn.linear_model import LogisticRegression

    lr = LogisticRegression(C=1e4, max_iter=1000).fit(scores[:, None], y)
    return float(lr.coef_[0, 0]), float(lr.intercept_[0])


def pointwise(data: Training, queries: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import StandardScaler

    rows = queries[data.group]
    model = make_pipeline(StandardScaler(), LogisticRegression(max_iter=2000))
    model.fit(data.x[rows], data.y[rows])
    return lambda x: model.predict_proba(x)[:, 1]


def trees(data: Training, queries: np.ndarray) -> Callable[[np.ndarray], np.ndarray]:
    from sklearn.ensemble import HistGradientBoostingClassifier

    rows = queries[data.group]
    model = HistGradientBoostingClassifier(max_iter=200, learning_rate=0.05)
    model.fit(data.x[rows], data.y[rows])
    return lambda x: model.predict_proba(x)[:, 1]


def cross_validate(data: Training, fit: Any) -> dict[str, float]:
    """Mean ranking metrics over 5 folds of the training queries."""
    fold = np.arange(len(data.qids)) % 5
    ranked: dict[str, list[str]] = {}
    for k in range(5):
        model = fit(data, fold != k)
        score = model.score if isinstance(model, FusionModel) else model
        held = {q: data.found[q] for i, q in enumerate(data.qids) if fold[i] == k}
        ranked.update(fusion.rank(held, lambda c, s=score: s(c.features)))
    return _metrics(data, ranked)


def evaluate(data: Training, qids: list[str], score: Any) -> dict[str, float]:
    return _metrics(data, fusion.rank({q: data.found[q] for q in qids}, score))


def _metrics(data: Training, ranked: dict[str, list[str]]) -> dict[str, float]:
    relevant = {q: data.relevant[q] for q in data.qids}
    per_query = metrics.ranking_metrics(relevant, ranked, fusion.METRICS)
    return metrics.mean_metrics(per_query)


if __name__ == "__main__":
    sys.exit(main())
