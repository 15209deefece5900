"""The JSON form of papers, hits, answers and topics: what ``rag ... --json`` prints and the
web chat's ``/ask`` endpoint returns.

Every text that came from a paper or a model is made safe for whatever renders it
(``rag.text.sanitize``), as the web page is.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from typing import TYPE_CHECKING, Any

from .text.sanitize import safe_text, safe_url
from .types import Answer, Hit, Paper, YearCount

if TYPE_CHECKING:  # rag.answer.topics imports numpy; the CLI's start path does not need it
    from .answer.lists import ListedPaper
    from .answer.topics import Topic


def paper_json(p: Paper) -> dict[str, Any]:
    return asdict(_safe_paper(p))


def hit_json(h: Hit) -> dict[str, Any]:
    evidence = [safe_text(e) for e in h.evidence]
    return {"score": h.score, "evidence": evidence, "paper": paper_json(h.paper)}


def answer_json(a: Answer) -> dict[str, Any]:
    citations = [
        replace(c, paper=_safe_paper(c.paper), quote=safe_text(c.quote)) for c in a.citations
    ]
    return {
        "text": safe_text(a.text),
        "grounded": a.grounded,
        "query": safe_text(a.query),
        "citations": [
            {"number": c.number, "quote": c.quote, "paper": asdict(c.paper)} for c in citations
        ],
        "references": replace(a, citations=tuple(citations)).references,
        "removed_citations": a.removed_citations,
        "removed": [
            {"statement": safe_text(r.statement), "reason": safe_text(r.reason)} for r in a.removed
        ],
        "coverage": a.coverage,
        "listing": a.listing,
        "series": [series_json(y) for y in a.series],
        "backend": a.backend,
        "timings": a.timings,
        "hits": [hit_json(h) for h in a.hits],
    }


def series_json(y: YearCount) -> dict[str, Any]:
    """A year of a trend; a year with no paper indexed has no count (a gap, not a zero)."""
    return {"year": y.year, "count": y.count if y.total else None, "total": y.total,
            "share": y.share}  # fmt: skip


def listed_json(p: ListedPaper) -> dict[str, Any]:
    return {"score": p.score, "reason": safe_text(p.reason), "paper": paper_json(p.paper)}


def topic_json(t: Topic) -> dict[str, Any]:
    """A theme with every paper in it and the paper's place on the map."""
    return {
        "topic_id": t.topic_id,
        "label": safe_text(t.label),
        "terms": [safe_text(x) for x in t.terms],
        "size": t.size,
        "papers": [
            {**paper_json(p), "x": round(x, 4), "y": round(y, 4)}
            for p, (x, y) in zip(t.papers, t.points, strict=True)
        ],
    }


def _safe_paper(p: Paper) -> Paper:
    return replace(
        p,
        title=safe_text(p.title),
        abstract=safe_text(p.abstract),
        venue=safe_text(p.venue),
        authors=tuple(safe_text(a) for a in p.authors),
        url=safe_url(p.url),
        keywords=tuple(safe_text(k) for k in p.keywords),
    )
