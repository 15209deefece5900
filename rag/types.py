"""The few types a user touches: papers, hits, citations and answers, and the names of
the choices a user makes (search modes, answering backends)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal, get_args

SearchMode = Literal["hybrid", "bm25", "dense"]
SEARCH_MODES: tuple[SearchMode, ...] = get_args(SearchMode)
Backend = Literal["local", "openai", "extractive"]
BACKENDS: tuple[Backend, ...] = get_args(Backend)

YEARS = range(1800, 2200)  # a year outside these is a mistake in a paper list


@dataclass(frozen=True)
class Paper:
    """One paper as indexed: its abstract and what is known about it."""

    paper_id: str
    title: str
    abstract: str
    title_derived: bool = False
    venue: str = ""
    year: int | None = None
    authors: tuple[str, ...] = ()
    url: str = ""
    keywords: tuple[str, ...] = ()

    @property
    def label(self) -> str:
        """Title as shown to a person; derived titles are marked."""
        return f"{self.title} (derived title)" if self.title_derived else self.title

    @property
    def venue_year(self) -> str:
        return " ".join(p for p in (self.venue, str(self.year or "")) if p)


@dataclass(frozen=True)
class Hit:
    """A retrieved paper with its fused score and its best-matching chunks."""

    paper: Paper
    score: float
    evidence: tuple[str, ...] = ()
    lexical_rank: int | None = None
    dense_rank: int | None = None
    dense_similarity: float | None = None


@dataclass(frozen=True)
class Citation:
    """A numbered source cited in an answer, with the sentence that supports it."""

    number: int
    paper: Paper
    quote: str = ""


Coverage = Literal["answered", "unstated", "no_paper", "not_covered"]
"""How an answer stands to its question: ``answered`` from the cited abstracts; ``unstated``:
the paper it asks about is found but its abstract does not state what is asked;
``no_paper``: no indexed paper does what the question presumes (the closest are named);
``not_covered``: nothing indexed is relevant (``grounded`` is False)."""


@dataclass(frozen=True)
class Removed:
    """A statement the check took out of an answer, and why (e.g. "the number 8 is in no
    cited abstract")."""

    statement: str
    reason: str


@dataclass(frozen=True)
class YearCount:
    """A year's papers on a topic beside every indexed paper of that year (``total`` 0: no
    paper of that year is indexed, a gap, not a zero)."""

    year: int
    count: int
    total: int

    @property
    def share(self) -> float | None:
        return self.count / self.total if self.total else None


@dataclass(frozen=True)
class Answer:
    """An answer: text with checked ``[n]`` markers, its citations and how it was made."""

    text: str
    grounded: bool
    query: str
    citations: tuple[Citation, ...] = ()
    hits: tuple[Hit, ...] = ()
    removed_citations: int = 0
    removed: tuple[Removed, ...] = ()
    coverage: Coverage = "answered"
    backend: Backend | None = None  # None: no backend wrote it (a list of related papers)
    timings: dict[str, float] = field(default_factory=dict)
    listing: bool = False  # a list question's answer: the count, then a cited line per paper
    series: tuple[YearCount, ...] = ()  # a trend's counts per year, from the index

    @property
    def references(self) -> str:
        """The reference list as plain text, one line per citation."""
        lines = []
        for c in self.citations:
            p = c.paper
            parts = [f"[{c.number}] {p.label}"]
            if p.venue_year:
                parts.append(p.venue_year)
            if p.url:
                parts.append(p.url)
            lines.append(". ".join(parts))
        return "\n".join(lines)


Stage = Literal["searching", "reading", "writing"]


@dataclass(frozen=True)
class Step:
    """What an answer is doing now, streamed between its pieces of text.

    ``searching`` comes first; ``reading`` once retrieval is done, with the papers the answer
    will be written from (show them at once); ``writing`` while the model writes.
    """

    stage: Stage
    hits: tuple[Hit, ...] = ()
    query: str = ""
