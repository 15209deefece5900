"""Metrics: ranking quality through ranx, and what an answer cites and states.

Ranking metrics are ranx's (the same definitions as trec_eval, which BEIR uses); this
module only turns ranked paper ids into ranx's ``Qrels`` and ``Run``.
"""

from __future__ import annotations

import re
import unicodedata
import warnings
from collections.abc import Iterable, Mapping, Sequence

import numpy as np

RETRIEVAL_METRICS = ("recall@1", "recall@5", "recall@10", "mrr", "ndcg@10")


def ranking_metrics(
    relevant: Mapping[str, Sequence[str]],
    ranked: Mapping[str, Sequence[str]],
    metrics: Sequence[str] = RETRIEVAL_METRICS,
) -> dict[str, dict[str, float]]:
    """Per query, each metric of its ranked paper ids against its relevant ones.

    ``ranked`` lists paper ids best first; a query missing from it counts as finding
    nothing. Queries without relevant papers are left out.
    """
    from ranx import Qrels, Run, evaluate

    queries = [q for q, rel in relevant.items() if rel]
    if not queries:
        return {}
    qrels = Qrels({q: {pid: 1 for pid in relevant[q]} for q in queries})
    run = Run({q: _scored(ranked.get(q, ())) for q in queries})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # numba's cast warnings on every call
        evaluate(qrels, run, list(metrics), save_results_in_run=True)
    # per-query scores as ranx keeps them, by query id (not by position)
    return {q: {m: float(run.scores[m][q]) for m in metrics} for q in queries}


def _scored(ranked: Sequence[str]) -> dict[str, float]:
    """Ranked ids as strictly decreasing scores, so ranx keeps the order (first id wins)."""
    scores: dict[str, float] = {}
    for rank, pid in enumerate(ranked):
        scores.setdefault(pid, float(len(ranked) - rank))
    return scores


def mean_metrics(per_query: Mapping[str, Mapping[str, float]]) -> dict[str, float]:
    """The mean of each metric over the queries."""
    if not per_query:
        return {}
    names = next(iter(per_query.values())).keys()
    return {m: float(np.mean([row[m] for row in per_query.values()])) for m in names}


# -- answers ---------------------------------------------------------------------------------
def citation_precision(cited: Sequence[str], relevant: Iterable[str]) -> float | None:
    """The share of cited papers that are relevant; None when nothing is cited."""
    papers = set(cited)
    if not papers:
        return None
    return len(papers & set(relevant)) / len(papers)


def citation_recall(cited: Sequence[str], relevant: Iterable[str]) -> float | None:
    """The share of relevant papers that are cited; None when none is relevant."""
    wanted = set(relevant)
    if not wanted:
        return None
    return len(wanted & set(cited)) / len(wanted)


_LATEX_ESCAPE = re.compile(r"\\([%$&#_{}])")
_SPACED_PERCENT = re.compile(r"(\d)\s*(?:%|percent\b|per cent\b)")
_THOUSANDS = re.compile(r"(?<=\d),(?=\d{3}\b)")


def normalise(text: str) -> str:
    """Text as facts are compared in: NFKC, lower case, no LaTeX escapes, "6.2 %" as "6.2%"."""
    text = unicodedata.normalize("NFKC", text).lower().replace("\u2212", "-")
    text = _LATEX_ESCAPE.sub(r"\1", text)
    text = text.replace("$", "").replace("\\", "")
    text = _SPACED_PERCENT.sub(r"\1%", text)
    text = _THOUSANDS.sub("", text)
    return " ".join(text.split())


def states(text: str, fact: str) -> bool:
    """Whether ``text`` states ``fact``; a number must match whole ("6.2%" is not in "16.2%")."""
    wanted = normalise(fact)
    if not wanted:
        return False
    before = r"(?<![\w.])" if wanted[0].isalnum() else ""
    after = r"(?![\w])" if wanted[-1].isalnum() else ""
    return re.search(before + re.escape(wanted) + after, normalise(text)) is not None


def fact_recall(facts: Sequence[str], text: str) -> float | None:
    """The share of facts the text states; None when there are none to check."""
    if not facts:
        return None
    return sum(states(text, f) for f in facts) / len(facts)


# -- summaries ---------------------------------------------------------------------------------
def mean(values: Iterable[float | None]) -> float | None:
    """The mean of the values that are not None; None when there are none."""
    present = [v for v in values if v is not None]
    return float(np.mean(present)) if present else None


def percentiles(values: Iterable[float | None]) -> dict[str, float | None]:
    """p50 and p95 of the values that are not None, and how many there were."""
    present = [v for v in values if v is not None]
    if not present:
        return {"p50": None, "p95": None, "n": 0}
    p50, p95 = np.percentile(present, [50, 95])
    return {"p50": float(p50), "p95": float(p95), "n": len(present)}


# -- faithfulness ------------------------------------------------------------------------------
_SAYS_UNSTATED = re.compile(r"\bdoes not (?:say|state|mention|report)\b|\bnot stated\b", re.I)
_WORD = re.compile(r"[\w'²³-]+")


def says_unstated(text: str) -> bool:
    """The answer says the abstract does not state what was asked."""
    return bool(_SAYS_UNSTATED.search(text))


def numbers_not_in(text: str, sources: Iterable[str]) -> list[str]:
    """Numbers the text states that none of the source texts holds."""
    from rag.evaluation import numbers_in, plain

    held = {n for s in sources for n in numbers_in(plain(s))}
    return [n for n in dict.fromkeys(numbers_in(plain(text))) if n not in held]


def leaked_runs(text: str, prompt: str, run: int = 5) -> list[str]:
    """Runs of ``run`` words of the prompt's own instructions that the text repeats."""
    words = [w.lower() for w in _WORD.findall(prompt)]
    said = " " + " ".join(w.lower() for w in _WORD.findall(text)) + " "
    runs = {" ".join(words[i : i + run]) for i in range(len(words) - run + 1)}
    return sorted(r for r in runs if f" {r} " in said)
