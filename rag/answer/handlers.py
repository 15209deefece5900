"""How each kind of question is answered: one handler per kind, tried in a declared order.

A handler says whether a question is its kind (``matches``) and answers it (``answer``),
yielding what ``Assistant.stream`` yields: ``Step``s, text pieces, then one ``Answer``.
``HANDLERS`` is the order they are tried in; the last, ``PaperQuestion``, takes any question.
A follow-up is rewritten into a standalone question before any handler sees it. Adding a
kind is a class with these two methods and a place in the order (``Assistant(handlers=...)``
takes another order).
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field, replace
from typing import TYPE_CHECKING, Protocol

from ..retrieve.search import FilterArgs
from ..types import Answer, Hit, Step
from . import answering, lists, trends
from . import judge as judges
from . import overview as overviews
from . import premise as premises
from .generators import Generator
from .question import parse_filters

if TYPE_CHECKING:
    from ..assistant import Assistant

Event = str | Step | Answer


@dataclass
class Asked:
    """A question as the handlers see it, with what answering it needs."""

    query: str  # standalone: a follow-up rewritten
    assistant: Assistant
    backend: str  # the generator's name
    k: int
    filters: FilterArgs
    started: float = field(default_factory=time.perf_counter)
    timings: dict[str, float] = field(default_factory=dict)

    @property
    def generator(self) -> Generator:
        """Built on first use: a question answered without a model never loads one."""
        return self.assistant.generator(self.backend)

    def retrieved(self) -> None:
        """Note the time spent finding what to answer from."""
        self.timings["retrieve"] = time.perf_counter() - self.started


class Handler(Protocol):
    kind: str

    def matches(self, asked: Asked) -> bool: ...

    def answer(self, asked: Asked) -> Iterator[Event]: ...


class Trend:
    """ "How has work on X changed from 2014 to 2018?": papers per year, shares, examples."""

    kind = "trend"

    def matches(self, asked: Asked) -> bool:
        return trends.asks_trend(asked.query)

    def answer(self, asked: Asked) -> Iterator[Event]:
        a = asked.assistant
        result = a.trend(asked.query, **asked.filters)
        asked.retrieved()
        yield from trends.trend_answer(result, a.sentence_vectors, asked.timings)


class Venues:
    """ "Is X more common at ICLR or NeurIPS?": counts and shares over common years."""

    kind = "venues"

    def matches(self, asked: Asked) -> bool:
        return bool(self._venues(asked))

    def _venues(self, asked: Asked) -> list[str]:
        return trends.compared_venues(asked.query, asked.assistant.retriever.corpus.venues)

    def answer(self, asked: Asked) -> Iterator[Event]:
        a, query = asked.assistant, asked.query
        rest = FilterArgs(**asked.filters)
        rest.pop("venue", None)  # the venues compared are the question's
        topic = trends.venues_topic(query, a.retriever.corpus.venues)
        found, counts, years = a.venues(topic, self._venues(asked), **rest)
        asked.retrieved()
        vectors = a.sentence_vectors
        yield from trends.venues_answer(query, found, counts, years, vectors, asked.timings)


class AuthorPapers:
    """ "What has <author> published on X?": that author's papers on the topic."""

    kind = "author_papers"

    def matches(self, asked: Asked) -> bool:
        return trends.by_author_question(asked.query) is not None

    def answer(self, asked: Asked) -> Iterator[Event]:
        a, query = asked.assistant, asked.query
        author, topic = trends.by_author_question(query) or ("", "")
        chosen, _ = a.filters(query, **{**asked.filters, "author": author})
        found = a.members(topic, chosen)
        asked.retrieved()
        vectors = a.sentence_vectors
        yield from trends.author_papers_answer(query, author, found, vectors, asked.timings)


class Authors:
    """ "Who works on X?": authors by their number of papers on the topic."""

    kind = "authors"

    def matches(self, asked: Asked) -> bool:
        return trends.asks_authors(asked.query)

    def answer(self, asked: Asked) -> Iterator[Event]:
        a, query = asked.assistant, asked.query
        found, ranked = a.authors(query, **asked.filters)
        asked.retrieved()
        vectors = a.sentence_vectors
        yield from trends.authors_answer(query, found, ranked, vectors, asked.timings)


class Overview:
    """ "What are the main themes of ICML 2026?": the themes of a venue or year."""

    kind = "overview"

    def matches(self, asked: Asked) -> bool:
        return overviews.asks_overview(asked.query, asked.assistant.retriever.corpus.venues)

    def answer(self, asked: Asked) -> Iterator[Event]:
        a = asked.assistant
        chosen, _ = a.filters(asked.query, **asked.filters)
        themes = a.themes(chosen, asked.backend)
        asked.retrieved()
        yield from overviews.answer(asked.query, themes, chosen, a.sentence_vectors, asked.timings)


class PaperList:
    """ "Which papers ...?": every relevant paper, each with the sentence that says why; when
    none is relevant enough, the closest papers, said to be only that."""

    kind = "list"

    def matches(self, asked: Asked) -> bool:
        return lists.is_list_question(asked.query)

    def answer(self, asked: Asked) -> Iterator[Event]:
        a = asked.assistant
        found = a.find_all(asked.query, judge=a.judge(asked.backend), **asked.filters)
        if not found.papers:  # answered as a question about the closest papers
            closest = next(h for h in (Comparison(), PaperQuestion()) if h.matches(asked))
            yield from closest.answer(asked, unlisted=found.topic)
            return
        asked.retrieved()
        yield from lists.answer_events(found, a.sentence_vectors, asked.timings)


class PaperQuestion:
    """Any other question: answered from the abstracts of the most relevant papers, every
    statement checked against the abstract it cites."""

    kind = "papers"

    def matches(self, asked: Asked) -> bool:
        return True

    def answer(self, asked: Asked, unlisted: str | None = None) -> Iterator[Event]:
        """``unlisted``: a list question's topic when no paper is relevant enough to list."""
        a, query, filters, timings = asked.assistant, asked.query, asked.filters, asked.timings
        hits = a.search(query, asked.k, **filters)
        note = ""
        if not hits and (emptied := emptied_by(a, query, filters)):
            # a filter read from the question's words left nothing: say so, search everything
            note = f"No indexed paper is from {emptied}; these are from all indexed papers."
            hits = a.search(query, asked.k, parse=False, **filters)
        relevant = self.chosen(asked, relevant_hits(a, query, hits))
        if a.reader is not None:
            relevant = answering.read(relevant, query, a.reader)
        sources = answering.build_sources(relevant, a.sentence_vectors, question=query)
        asked.retrieved()
        yield Step("reading", tuple(s.hit for s in sources), query)
        if not sources:
            refused = answering.refusal(query, hits, timings)
            yield refused.text
            yield refused
            return
        gap = answering.find_gap(query, sources, a.retriever.corpus.venues, a.verifier)
        judge = a.judge(asked.backend, "premises") if unlisted is None else None
        if judge is not None:
            judge = judges.Remembered(judge)  # read again if nothing the model wrote stands
            gap = answering.judged_gap(query, sources, gap, judge, a.retriever.corpus.venues)
        if unlisted is not None and (
            gap is None or gap.coverage != "no_paper" or not gap.names_words
        ):
            # none listed: the closest papers are shown as what they are, not as the list (a
            # word check that names no missing word says less than the list's own reason)
            gap = answering.none_listed(unlisted, sources)
        reader = None if gap else a.judge(asked.backend, "statements")
        checker = answering.Checker(sources, a.embedder, query, a.verifier, reader is not None)
        started = time.perf_counter()
        if note:
            yield note + "\n"
        if gap:
            yield gap.lead + "\n"
            reply: Iterable[str] = [answering.gap_reply(gap, relevant, sources)]
        else:
            yield Step("writing", tuple(s.hit for s in sources), query)
            reply = asked.generator.reply(query, sources, relevant)
        yield from _checked(checker, reply)
        if reader is not None and (shown := checker.reread(reader)):
            yield shown
        if not gap and asked.generator.writes and answering.falls_short(checker, query):
            # what the model wrote did not survive the check, or left out the number or the
            # names asked for: the abstracts' own sentences say it, unless nothing it wrote
            # stood and the abstract is read not to state it
            if judge is not None and not checker.citations():
                gap = answering.unchecked_gap(query, sources, judge)
            if gap:
                yield gap.lead + "\n"
                reply = ["\n" + answering.gap_reply(gap, relevant, sources)]
                yield from _checked(checker, reply)
            else:
                quoted = "".join(a.generator("extractive").reply(query, sources, relevant))
                yield from _checked(checker, ["\n" + quoted])
        elif not gap and asked.generator.writes:
            if more := self.completed(asked, checker, relevant, sources):
                yield from _checked(checker, more)
        timings["generate"] = time.perf_counter() - started
        final = finished(checker, gap, query, hits, timings, note)
        if final.coverage == "not_covered":
            yield final.text
        yield final

    def chosen(
        self, asked: Asked, relevant: list[answering.ScoredHit]
    ) -> list[answering.ScoredHit]:
        """The papers to answer from, of those relevant."""
        return relevant

    def completed(
        self,
        asked: Asked,
        checker: answering.Checker,
        relevant: list[answering.ScoredHit],
        sources: list[answering.Source],
    ) -> list[str]:
        """What follows a model's answer that stood the check: the abstracts' own sentences
        for what the check removed of it (``Checker.in_place_of_removed``), then, for a
        question joining two asks, for the ask it left unanswered (``answering.each_ask``)."""
        quoted = checker.in_place_of_removed()
        more = [quoted] if quoted else []
        reader = asked.assistant.reader
        if reader is not None and (
            each := answering.each_ask(checker, asked.query, reader, said=quoted)
        ):
            more.append(each)
        return ["\n" + "\n".join(more)] if more else []


class Comparison(PaperQuestion):
    """ "How do X and Y differ?": the two papers it sets side by side (named, or the best for
    each half of the question), then each one's own sentence on what it does."""

    kind = "comparison"

    def matches(self, asked: Asked) -> bool:
        return premises.compares(asked.query)

    def chosen(
        self, asked: Asked, relevant: list[answering.ScoredHit]
    ) -> list[answering.ScoredHit]:
        return compared(asked.assistant, asked.query, relevant, asked.k, asked.filters)

    def completed(
        self,
        asked: Asked,
        checker: answering.Checker,
        relevant: list[answering.ScoredHit],
        sources: list[answering.Source],
    ) -> list[str]:
        # the model's comparison, then each paper's own sentence on what it does
        extra = answering.in_own_words(relevant, sources, checker.shown)
        return ["\n" + extra] if extra else []


HANDLERS: tuple[Handler, ...] = (
    Trend(),
    Venues(),
    AuthorPapers(),
    Authors(),
    Overview(),
    PaperList(),
    Comparison(),
    PaperQuestion(),
)


def _checked(checker: answering.Checker, pieces: Iterable[str]) -> Iterator[str]:
    """What of ``pieces`` the checker lets through, as it does."""
    for piece in pieces:
        if shown := checker.feed(piece):
            yield shown
    if shown := checker.close():
        yield shown


def emptied_by(a: Assistant, question: str, filters: FilterArgs) -> str:
    """The venue and years read from the question's words ("NeurIPS 2018"), when the
    filters given do not set them: what to name when they leave no paper."""
    corpus = a.retriever.corpus
    parsed, _ = parse_filters(question, corpus.venues, corpus.titles_naming_filters)
    given = {name for name, value in filters.items() if value is not None}
    parts = []
    if parsed.venue and "venue" not in given:
        parts.append(parsed.venue)
    if not given & {"year", "year_min", "year_max"}:
        low, high = parsed.year_min, parsed.year_max
        if low is not None and high is not None:
            parts.append(str(low) if low == high else f"{low}-{high}")
        elif low is not None:
            parts.append(f"{low} on")
        elif high is not None:
            parts.append(f"before {high + 1}")
    return " ".join(parts)


def relevant_hits(a: Assistant, query: str, hits: list[Hit]) -> list[answering.ScoredHit]:
    """Hits close enough to the question to answer from, in fused order; none: refuse."""
    if not hits:
        return []
    scored = answering.score_hits(query, hits, a.sentence_vectors)
    # a question may describe a paper by its title's words ("the improved analysis of the
    # proximal sampler"): its title counts as one of its sentences here
    titles = a.sentence_vectors([s.hit.paper.title for s in scored])
    by_title = titles @ a.sentence_vectors.embedder.embed_query(query)
    relevance = [max(s.relevance, float(t)) for s, t in zip(scored, by_title, strict=True)]
    threshold = a.settings.retrieval.min_similarity
    best = max(relevance, default=0.0)
    # papers far below the best match are retrieved, not relevant: they are not cited
    floor = max(threshold, best - answering.RELEVANCE_MARGIN)
    return [s for s, r in zip(scored, relevance, strict=True) if r >= floor]


def compared(
    a: Assistant,
    query: str,
    relevant: list[answering.ScoredHit],
    k: int | None,
    filters: FilterArgs,
) -> list[answering.ScoredHit]:
    """The two papers a comparison sets side by side: those it names, else the best
    paper for each half of the question ("How do NoisyNet" / "RESLOPE differ ..."), so
    a paper described rather than named ("the dataset valuation paper") is found too."""
    named = [s for s in relevant if s.named]
    if len(named) >= 2:
        return relevant
    picked: list[answering.ScoredHit] = []
    for side in premises.subjects(query):
        taken = {s.hit.paper.paper_id for s in picked}
        hits = [h for h in a.search(side, k, **filters) if h.paper.paper_id not in taken]
        scored = relevant_hits(a, side, hits)
        own = [s for s in scored if s.named] or scored
        if own:
            picked.append(replace(own[0], named=True))
    if len(picked) != 2:
        return relevant
    # read against the whole question, as any source is
    rescored = answering.score_hits(query, [s.hit for s in picked], a.sentence_vectors)
    return [replace(s, named=True) for s in rescored]


def finished(
    checker: answering.Checker,
    gap: answering.Gap | None,
    query: str,
    hits: list[Hit],
    timings: dict[str, float],
    note: str = "",
) -> Answer:
    """The final answer: what the checker let stand, with its citations and what it removed."""
    citations = checker.citations()
    removed = checker.removed()
    if not citations and not gap:
        refused = answering.refusal(query, hits, timings)
        return replace(refused, removed=removed, removed_citations=checker.removed_markers)
    text = (f"{note}\n" if note else "") + (f"{gap.lead}\n" if gap else "") + checker.shown
    return Answer(
        text=text.strip(),
        grounded=True,
        query=query,
        citations=citations,
        hits=tuple(hits),
        removed_citations=checker.removed_markers,
        removed=removed,
        timings=timings,
        coverage=gap.coverage if gap else "answered",
    )
