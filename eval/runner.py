"""Questions to outcomes to a report: each question asked as a user would, then scored.

question (+ earlier turns) -> Answer from the product default (hybrid retrieval, the
chosen backend) -> the same query searched by every retriever -> metrics per question ->
the summary that ``report`` writes out and the gates check.
"""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rag import Answer, Assistant, Paper
from rag.evaluation import score_hits
from rag.types import SearchMode

from . import metrics
from .questions import Question

PRODUCT_RETRIEVER: SearchMode = "hybrid"
RETRIEVERS: tuple[SearchMode, ...] = ("bm25", "dense", "hybrid")
DEPTH = 10  # ranking metrics look at the first 10 papers


@dataclass
class Outcome:
    """What happened to one question: its answer and each retriever's ranking."""

    question: Question
    relevant_papers: list[Paper]
    answer: Answer
    rankings: dict[str, list[str]] = field(default_factory=dict)
    search_seconds: dict[str, float] = field(default_factory=dict)
    similarity: dict[str, float | None] = field(default_factory=dict)
    scores: dict[str, dict[str, float]] = field(default_factory=dict)

    @property
    def relevant(self) -> list[str]:
        return [p.paper_id for p in self.relevant_papers]

    @property
    def refused(self) -> bool:
        """Not answered from the papers: nothing relevant, or no paper does what it asks."""
        return self.answer.coverage in ("not_covered", "no_paper")

    @property
    def statements_body(self) -> str:
        """The answer's statements, without the lead that says what is not stated and the
        counts the index itself gives (a list's size, a theme's size; see ``own_counts``)."""
        text = self.answer.text
        if self.answer.coverage in ("unstated", "no_paper"):
            text = text.split("\n", 1)[1] if "\n" in text else ""
        text = _COUNT_LEAD.sub("", text)
        return _THEME_SIZE.sub(r"\1", text)

    def own_counts_wrong(self) -> list[str]:
        """A list's count that is not the number of papers it cites."""
        m = _COUNT_LEAD.search(self.answer.text)
        if not m or not m.group("n"):
            return []
        n = int(m.group("n").replace(",", ""))
        return [] if n == len(self.answer.citations) else [m.group("n")]

    @property
    def cited(self) -> list[str]:
        return [c.paper.paper_id for c in self.answer.citations]


def ask(
    assistant: Assistant,
    question: Question,
    relevant: list[Paper],
    *,
    retrievers: Sequence[SearchMode] = RETRIEVERS,
    k: int | None = None,
    llm: str | None = None,
) -> Outcome:
    """Ask the question after its earlier turns, then search its query with each retriever."""
    history: list[Answer] = []
    for earlier in question.history:
        history.append(assistant.ask(earlier, history=list(history), k=k, llm=llm))
    answer = assistant.ask(question.question, history=history, k=k, llm=llm, **question.filters)
    outcome = Outcome(question, relevant, answer)
    for mode in retrievers:
        assistant.embedder.forget_queries()  # timed as a new question, not a cached one
        started = time.perf_counter()
        hits = assistant.search(answer.query, max(DEPTH, k or 0), mode=mode, **question.filters)
        outcome.search_seconds[mode] = time.perf_counter() - started
        outcome.rankings[mode] = [h.paper.paper_id for h in hits]
    outcome.similarity = similarities(assistant, answer)
    return outcome


def similarities(assistant: Assistant, answer: Answer) -> dict[str, float | None]:
    """How close the question came to the papers it retrieved, as refusal would judge it.

    ``chunk``: the best cosine similarity of the question to a retrieved paper's chunk
    (``Hit.dense_similarity``). ``sentence``: the best relevance the answering step gives a
    retrieved paper (its closest abstract sentence, 1.0 when the question names it), where
    the product scores hits that way.
    """
    if not answer.hits:
        return {"chunk": None, "sentence": None}
    chunk = {h.paper.paper_id: h.dense_similarity for h in answer.hits}
    missing = [pid for pid, sim in chunk.items() if sim is None]
    if missing:
        chunk.update(assistant.retriever.similarity(answer.query, missing))
    return {
        "chunk": max((s for s in chunk.values() if s is not None), default=None),
        "sentence": _sentence_relevance(assistant, answer),
    }


def _sentence_relevance(assistant: Assistant, answer: Answer) -> float | None:
    """The answering step's own relevance: its best sentence's similarity to the query."""
    scored = score_hits(answer.query, list(answer.hits), assistant.sentence_vectors)
    return max((float(s.relevance) for s in scored), default=None)


def score(outcomes: list[Outcome], retrievers: Sequence[str]) -> None:
    """Fill each outcome's ranking metrics, per retriever (answerable questions only)."""
    relevant = {o.question.id: o.relevant for o in outcomes if o.question.answerable}
    for mode in retrievers:
        ranked = {o.question.id: o.rankings.get(mode, []) for o in outcomes}
        per_query = metrics.ranking_metrics(relevant, ranked)
        for o in outcomes:
            if o.question.id in per_query:
                o.scores[mode] = per_query[o.question.id]


# -- the summary -------------------------------------------------------------------------------
def summarise(
    outcomes: list[Outcome], retrievers: Sequence[str], min_similarity: float
) -> dict[str, Any]:
    """Everything the report shows, as plain JSON-ready values."""
    answerable = [o for o in outcomes if o.question.answerable]
    return {
        "counts": {
            "questions": len(outcomes),
            "answerable": len(answerable),
            "unanswerable": len(outcomes) - len(answerable),
            "with_facts": sum(bool(o.question.facts) for o in outcomes),
            "follow_ups": sum(bool(o.question.history) for o in outcomes),
        },
        "retrieval": {mode: retrieval_summary(answerable, outcomes, mode) for mode in retrievers},
        "answers": answer_summary(outcomes),
        "latency": {
            stage: metrics.percentiles(o.answer.timings.get(stage) for o in outcomes)
            for stage in ("retrieve", "generate")
        },
        "calibration": calibration(outcomes, min_similarity),
        "questions": [question_row(o) for o in outcomes],
        "failures": [f for f in (failure(o, min_similarity) for o in outcomes) if f["problems"]],
    }


def retrieval_summary(
    answerable: list[Outcome], outcomes: list[Outcome], mode: str
) -> dict[str, Any]:
    scored = {o.question.id: o.scores[mode] for o in answerable if mode in o.scores}
    seconds = metrics.percentiles(o.search_seconds.get(mode) for o in outcomes)
    return {**metrics.mean_metrics(scored), "search_seconds": seconds, "queries": len(scored)}


def answer_summary(outcomes: list[Outcome]) -> dict[str, Any]:
    answerable = [o for o in outcomes if o.question.answerable]
    unanswerable = [o for o in outcomes if not o.question.answerable]
    answered = [o for o in answerable if not o.refused]
    return {
        "citation_precision": metrics.mean(
            metrics.citation_precision(o.cited, o.relevant) for o in answered
        ),
        "citation_recall": metrics.mean(
            metrics.citation_recall(o.cited, o.relevant) for o in answered
        ),
        "removed_citations": sum(o.answer.removed_citations for o in outcomes),
        "refusal_accuracy": _share(unanswerable, lambda o: o.refused),
        "false_refusal_rate": _share(answerable, lambda o: o.refused),
        "fact_recall": metrics.mean(
            metrics.fact_recall(o.question.facts, o.answer.text) for o in outcomes
        ),
        "answered": len(answered),
        **faithfulness_summary(outcomes),
    }


def faithfulness_summary(outcomes: list[Outcome]) -> dict[str, Any]:
    """Does every answer say only what its cited abstracts say?"""
    from rag.evaluation import ANSWER_RULES, SYSTEM_PROMPT

    def kind(name: str) -> list[Outcome]:
        return [o for o in outcomes if o.question.kind == name]

    return {
        "statements_kept": sum(len(_statements(o)) for o in outcomes),
        "statements_removed": sum(len(o.answer.removed) for o in outcomes),
        "false_premises": len(kind("false_premise")),
        "false_premises_confirmed": sum(not o.refused for o in kind("false_premise")),
        "unstated": len(kind("unstated")),
        "unstated_answered_as_stated": sum(
            not o.refused and not metrics.says_unstated(o.answer.text) for o in kind("unstated")
        ),
        "asked_facts_stated": metrics.mean(
            metrics.fact_recall(o.question.facts, o.answer.text)
            for o in outcomes
            if o.question.facts
        ),
        "invented_numbers": sum(len(invented_numbers(o)) for o in outcomes),
        "prompt_leaks": sum(
            bool(metrics.leaked_runs(o.answer.text, f"{SYSTEM_PROMPT} {ANSWER_RULES}"))
            for o in outcomes
        ),
        **kind_summary(outcomes),
    }


# -- each kind of question, passed or not ------------------------------------------------------
def passed(o: Outcome) -> bool | None:
    """Whether the answer does what its kind of question needs (None: no kind)."""
    q = o.question
    if q.kind == "false_premise":
        return o.refused
    if q.kind == "unstated":
        return o.refused or metrics.says_unstated(o.answer.text)
    if q.kind == "list":
        recall, precision = list_scores(o)
        return recall >= 0.9 and precision >= 0.85
    if q.kind == "comparison":
        return compared_both(o)
    if q.kind in ("specific", "numeric", "followup", "multi"):
        cites = bool(set(o.cited) & set(o.relevant))
        return not o.refused and cites and metrics.fact_recall(q.facts, o.answer.text) in (None, 1)
    return None


def list_scores(o: Outcome) -> tuple[float, float]:
    """(recall, precision) of the papers a list answer cites; an answer that lists none (or
    says no paper does it) is an empty list: recall 0 and precision 0."""
    cited, wanted = set(o.cited) if not o.refused else set(), set(o.relevant)
    if not cited:
        return 0.0, 0.0
    return len(cited & wanted) / len(wanted), len(cited & wanted) / len(cited)


def compared_both(o: Outcome) -> bool:
    """Both compared papers cited, and for each, a fact from its own abstract stated."""
    if o.refused or not set(o.relevant) <= set(o.cited):
        return False
    for paper in o.relevant_papers:
        own = [f for f in o.question.facts if metrics.states(f"{paper.title} {paper.abstract}", f)]
        if own and not any(metrics.states(o.answer.text, f) for f in own):
            return False
    return True


def kind_summary(outcomes: list[Outcome]) -> dict[str, Any]:
    """Per kind of question: how many passed; for lists, mean recall and precision."""
    kinds: dict[str, list[bool]] = {}
    for o in outcomes:
        verdict = passed(o)
        if verdict is not None:
            kinds.setdefault(o.question.kind, []).append(verdict)
    lists = [list_scores(o) for o in outcomes if o.question.kind == "list"]
    answerable = [o for o in outcomes if o.question.answerable and o.question.kind != "list"]
    return {
        "passed": {k: f"{sum(v)}/{len(v)}" for k, v in sorted(kinds.items())},
        "passed_share": {k: sum(v) / len(v) for k, v in sorted(kinds.items())},
        "passed_all": f"{sum(sum(v) for v in kinds.values())}/{sum(map(len, kinds.values()))}",
        "list_recall": metrics.mean(r for r, _ in lists),
        "list_precision": metrics.mean(p for _, p in lists),
        "answerable_refused": _share(answerable, lambda o: o.refused),
        # answered "The abstract does not say" where its abstract does (its sentences may
        # still hold the asked facts, which the kind's pass counts)
        "answerable_said_unstated": _share(
            [o for o in answerable if o.question.kind != "unstated"],
            lambda o: not o.refused and metrics.says_unstated(o.answer.text),
        ),
        # a fact the abstract does not give, answered "No indexed paper does that" (or as
        # covered by no paper): the kind's pass counts it, but the paper asked of is indexed
        "unstated_said_no_paper": sum(o.refused for o in outcomes if o.question.kind == "unstated"),
    }


def _statements(o: Outcome) -> list[Any]:
    from rag.evaluation import split_statements

    return [s for s in split_statements(o.statements_body) if s.cites]


def invented_numbers(o: Outcome) -> list[str]:
    """Numbers the answer states that no abstract it cites holds (the question's own count),
    and a list's count that differs from the papers it cites."""
    cited = [f"{c.paper.title}. {c.paper.abstract}" for c in o.answer.citations]
    invented = metrics.numbers_not_in(o.statements_body, [*cited, o.question.question])
    return invented + o.own_counts_wrong()


# The counts the index gives, not an abstract: "12 indexed papers (ICML, 2026) match ...:",
# "The 19 ICML 2026 papers fall into 4 themes ...", "Theme: graphs (3 papers): ...".
_COUNT_LEAD = re.compile(
    r"^(?:(?P<n>\d[\d,]*) indexed papers?\b[^\n]*\bmatch(?:es)?\b[^\n]*:"
    r"|The [\d,]+ [^\n]*papers? fall into [^\n]*)$\n?",
    re.M,
)
_THEME_SIZE = re.compile(r"^(Theme: [^\n]*?) \(\d[\d,]* papers?\)", re.M)


def _share(outcomes: list[Outcome], test: Any) -> float | None:
    return sum(bool(test(o)) for o in outcomes) / len(outcomes) if outcomes else None


def calibration(outcomes: list[Outcome], min_similarity: float) -> dict[str, Any]:
    """Per similarity signal: answerable vs unanswerable questions, to place the threshold."""
    return {
        "min_similarity": min_similarity,
        "signals": {
            signal: _calibrate(outcomes, signal, min_similarity)
            for signal in ("sentence", "chunk")
            if any(o.similarity.get(signal) is not None for o in outcomes)
        },
    }


def _calibrate(outcomes: list[Outcome], signal: str, threshold: float) -> dict[str, Any]:
    def values(answerable: bool) -> list[float]:
        found = (o.similarity.get(signal) for o in outcomes if o.question.answerable is answerable)
        return sorted(v for v in found if v is not None)

    yes, no = values(True), values(False)
    return {
        "answerable": _spread(yes),
        "unanswerable": _spread(no),
        "answerable_below_threshold": sum(v < threshold for v in yes),
        "unanswerable_at_or_above_threshold": sum(v >= threshold for v in no),
        "separating_range": [no[-1], yes[0]] if yes and no and no[-1] < yes[0] else None,
    }


def _spread(values: list[Any]) -> dict[str, Any]:
    if not values:
        return {"n": 0}
    import numpy as np

    p5, p50, p95 = np.percentile(values, [5, 50, 95])
    return {
        "n": len(values),
        "min": values[0],
        "p5": float(p5),
        "p50": float(p50),
        "p95": float(p95),
        "max": values[-1],
    }


def question_row(o: Outcome) -> dict[str, Any]:
    q = o.question
    return {
        "id": q.id,
        "line": q.line,
        "question": q.question,
        "query": o.answer.query,
        "answerable": q.answerable,
        "relevant": o.relevant,
        "relevant_titles": [p.title for p in o.relevant_papers],
        "rankings": o.rankings,
        "scores": o.scores,
        "first_relevant_rank": {m: _first_rank(r, o.relevant) for m, r in o.rankings.items()},
        "refused": o.refused,
        "similarity": o.similarity,
        "cited": o.cited,
        "citation_precision": metrics.citation_precision(o.cited, o.relevant)
        if q.answerable
        else None,
        "citation_recall": metrics.citation_recall(o.cited, o.relevant) if q.answerable else None,
        "removed_citations": o.answer.removed_citations,
        "facts": {f: metrics.states(o.answer.text, f) for f in q.facts},
        "fact_recall": metrics.fact_recall(q.facts, o.answer.text),
        "kind": q.kind,
        "passed": passed(o),
        "coverage": o.answer.coverage,
        "removed": [{"statement": r.statement, "reason": r.reason} for r in o.answer.removed],
        "invented_numbers": invented_numbers(o),
        "timings": o.answer.timings,
        "search_seconds": o.search_seconds,
        "answer": o.answer.text,
    }


def _first_rank(ranking: list[str], relevant: list[str]) -> int | None:
    return next((i for i, pid in enumerate(ranking, 1) if pid in relevant), None)


def failure(o: Outcome, min_similarity: float) -> dict[str, Any]:
    """What went wrong with one question, in words a person can act on."""
    q, problems = o.question, []
    titles = {p.paper_id: p.title for p in [*(h.paper for h in o.answer.hits), *o.relevant_papers]}
    sim = ", ".join(f"{k} {v:.3f}" for k, v in o.similarity.items() if v is not None) or "n/a"
    if q.answerable:
        hybrid = o.rankings.get(PRODUCT_RETRIEVER)
        if hybrid is not None:
            missed = [pid for pid in o.relevant if pid not in hybrid[:5]]
            if missed:
                ranks = "; ".join(f"{titles[pid]} ({_rank_text(hybrid, pid)})" for pid in missed)
                problems.append(f"hybrid top 5 misses {len(missed)}/{len(o.relevant)}: {ranks}")
        if o.refused and not o.answer.hits:
            problems.append("refused: no paper retrieved (does a filter read from it exclude all?)")
        elif o.refused:
            problems.append(f"refused (best similarity: {sim}; threshold {min_similarity})")
        elif o.relevant and not set(o.cited) & set(o.relevant):
            problems.append("cites none of the relevant papers")
        missing = [f for f in q.facts if not metrics.states(o.answer.text, f)]
        if missing:
            problems.append(f"answer lacks {', '.join(repr(f) for f in missing)}")
    elif not o.refused:
        cited = "; ".join(titles.get(pid, pid) for pid in o.cited) or "nothing"
        problems.append(
            f"answered an out-of-corpus question (best similarity: {sim}); cites {cited}"
        )
    if o.answer.removed_citations:
        problems.append(f"{o.answer.removed_citations} citation(s) to unretrieved sources removed")
    if q.kind == "false_premise" and not o.refused:
        problems.append("confirmed a false premise")
    if q.kind == "unstated" and not o.refused and not metrics.says_unstated(o.answer.text):
        problems.append("answered an unstated fact as if the abstract stated it")
    if q.kind == "list":
        recall, precision = list_scores(o)
        if recall < 1 or precision < 1:
            problems.append(f"list recall {recall:.2f}, precision {precision:.2f}")
    if q.kind == "comparison" and not compared_both(o):
        problems.append("comparison lacks a paper or a paper's own fact")
    if numbers := invented_numbers(o):
        problems.append(f"states numbers no cited abstract holds: {', '.join(numbers)}")
    return {"id": q.id, "line": q.line, "question": q.question, "problems": problems}


def _rank_text(ranking: list[str], pid: str) -> str:
    if pid in ranking:
        return f"rank {ranking.index(pid) + 1}"
    return f"not in the first {len(ranking)}" if ranking else "nothing retrieved"
