"""The corpus as data: a topic's papers counted per year, per venue and per author.

"How has work on X changed from 2014 to 2018?", `rag trend X`: question -> its topic (the
asking words taken off; the years and venue as filters) -> every paper of the filtered
index on the topic, by the complete-list judgement (``rag.answer.lists``: one abstract sentence
close to the topic, or close enough while the abstract says the topic's terms) -> counted
per year beside every indexed paper of that year, so that a growing conference does not
read as a growing topic -> two cited example papers per period, each line checked like any
answer's statements. The counts come from the index, never from a model.

A list reads the topic's nearest papers (``lists.POOL``); a count needs every paper on the
topic, so the candidates here are all papers whose stored vectors come near the topic or
whose abstracts use its words, each read sentence by sentence.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..index.snapshot import Corpus
from ..retrieve.search import Filters
from ..types import Answer, Hit, Step, YearCount
from . import answering, lists
from .answering import SentenceVectors
from .lists import Bars, Candidate, ListedPaper, chunk_mask, reason, says_topic, topic_terms

# Candidates: a paper whose closest chunk comes this near the topic (cosine) may hold a
# sentence over the list's first bar; one this near whose abstract uses the topic's words,
# a sentence over its second.
NEAR_ALONE = 0.45
NEAR_SAID = 0.15
# Too broad to count: the topic's words are in this share of the papers or more, ten times
# as many as its vector comes close to ("machine learning": 10.7% and 0.3% of the 23k
# abstracts; "reinforcement learning" 7.8% and 4.2%; see docs/trends.md), in an index of at
# least ``VAGUE_MIN_PAPERS``
VAGUE_SHARE = 0.05
VAGUE_RATIO = 10.0
VAGUE_MIN_PAPERS = 100
EXAMPLES_PER_PERIOD = 2
PERIODS = 3
# A list keeps papers within ``Bars.margin`` of its best one and only those it can quote a
# sentence for; a count has no single best paper across the years and counts a paper
# whether or not one of its sentences survives the check (``bench/trends.py`` measures both)
COUNT_MARGIN = False
COUNT_QUOTED = False

_CHANGE = (
    r"(?:chang|evolv|grow|grew|grown|develop|shift|declin|ris|rose|increas|decreas|shrink|"
    r"shrank|expand|spread)\w*"
)
# a time span or series, or a verb of change with no object asked in the past ("How has X
# changed?", "Did X grow between 2011 and 2024?"; not "How does the method change the
# learning rate?", nor a comparison that "differs from that of the paper ...")
_SERIES = re.compile(
    r"\b(?:trends?|over\s+(?:the\s+)?(?:years|time|decades?)|per\s+year|each\s+year|"
    r"by\s+year|year\s+(?:by|over)\s+year)\b",
    re.I,
)
_CHANGED = re.compile(
    rf"\b{_CHANGE}\b(?=\s*[?.!]*\s*$|\s+(?:over|from|between|since|during|across|through)\b)",
    re.I,
)
_PAST = re.compile(r"^\s*(?:(?:how|what)\s+)?(?:has|have|had|did)\b", re.I)
_TREND_ASKS = re.compile(
    r"^\s*(?:how|has|have|had|is|are|was|were|did|does|do|what|show|plot|chart)\b", re.I
)
_TREND_LEAD = re.compile(
    r"^(?:(?:how|has|have|had|did|does|do|is|are|was|were|what|show|plot|chart|me|the|a|an|"
    r"been|amount|number|share|count|popularity|volume|of|papers?|works?|research|studies|"
    r"interest|in|on|about|trends?|for|there|more|less)\s+)+",
    re.I,
)
_TREND_TAIL = re.compile(
    rf"\s*(?:\b(?:(?:has|have|had)\s+(?:been\s+)?)?{_CHANGE}\b.*|"
    r"\bover\s+(?:the\s+)?(?:years|time|decades?)\b.*|\b(?:per|each|by)\s+year\b.*|"
    r"\b(?:from|between|since|until|through|at|in)\s*(?:and|to)?\s*$)",
    re.I,
)


def asks_trend(question: str) -> bool:
    """The question asks how a topic's share of the papers changed over the years."""
    if _SERIES.search(question):
        return bool(_TREND_ASKS.search(question))
    return bool(_CHANGED.search(question) and _PAST.search(question))


def trend_topic(question: str) -> str:
    """What a trend question is about ("How has work on GANs changed?" -> "GANs"); the
    years and venue are taken off before (``question.parse_filters``)."""
    text = _TREND_TAIL.sub("", question.strip().rstrip("?.! "))
    text = _TREND_LEAD.sub("", text.strip() + " ").strip(" ,")
    text = _TOPIC_TAIL.sub("", text).strip(" ,")
    return text or question.strip().rstrip("?.! ")


# -- who is on the topic ---------------------------------------------------------------------
@dataclass(frozen=True)
class Members:
    """Every paper within the filters on a topic, best first; ``vague`` when the topic's
    words or vectors take in most of the index (nothing is counted then)."""

    topic: str
    filters: Filters
    papers: tuple[ListedPaper, ...]
    considered: int  # papers within the filters
    vague: bool = False
    scored: dict[str, answering.ScoredHit] = field(default_factory=dict, repr=False)


def members(
    corpus: Corpus,
    sentence_vectors: SentenceVectors,
    vectors: np.ndarray,
    topic: str,
    filters: Filters,
    bars: Bars | None = None,
) -> Members:
    """The complete-list judgement (``lists.find_all``) over every candidate of the index."""
    bars = bars or Bars()
    mask = chunk_mask(corpus, filters)
    allowed = np.ones(len(corpus.paper_ids), dtype=bool)
    if mask is not None:
        allowed = np.zeros(len(corpus.paper_ids), dtype=bool)
        allowed[corpus.chunk_paper_rows[mask > 0]] = True
    considered = int(allowed.sum())
    query = sentence_vectors.embedder.embed_query(topic)
    nearest = np.full(len(corpus.paper_ids), -1.0, dtype=np.float32)
    np.maximum.at(nearest, corpus.chunk_paper_rows, np.asarray(vectors @ query, np.float32))
    nearest[~allowed] = -1.0
    worded = _worded(corpus, topic) & allowed
    terms = topic_terms(topic)
    rows = np.flatnonzero((nearest >= NEAR_ALONE) | ((nearest >= NEAR_SAID) & worded))
    papers = [corpus.papers[corpus.paper_ids[r]] for r in rows]
    said = [says_topic(topic, terms, p) for p in papers]
    n_said, n_close = sum(said), int((nearest >= NEAR_ALONE).sum())
    if considered >= VAGUE_MIN_PAPERS and n_said >= VAGUE_SHARE * considered:
        if n_said >= VAGUE_RATIO * max(n_close, 1):
            return Members(topic, filters, (), considered, vague=True)
    keep = [i for i, r in enumerate(rows) if said[i] or nearest[r] >= NEAR_ALONE]
    hits = [Hit(papers[i], score=float(nearest[rows[i]])) for i in keep]
    scored = answering.score_hits(topic, hits, sentence_vectors)
    scored = lists.with_concepts(scored, query, sentence_vectors)
    candidates = [Candidate(sc, said[i]) for sc, i in zip(scored, keep, strict=True)]
    admitted = sorted((c for c in candidates if bars.admit(c)), key=lambda c: -c.relevance)
    floor = admitted[0].relevance - bars.margin if admitted and COUNT_MARGIN else -np.inf
    listed = []
    for c in admitted:
        if c.relevance < floor:
            break
        sentence = reason(c.scored, sentence_vectors, terms) if COUNT_QUOTED else ""
        if sentence or not COUNT_QUOTED:
            listed.append(ListedPaper(c.scored.hit.paper, round(c.relevance, 4), sentence))
    by_id = {c.scored.hit.paper.paper_id: c.scored for c in admitted}
    return Members(topic, filters, tuple(listed), considered, scored=by_id)


def explained(
    found: Members, papers: Sequence[ListedPaper], sentence_vectors: SentenceVectors, n: int
) -> tuple[ListedPaper, ...]:
    """The first ``n`` of ``papers`` with the sentence of their own abstract that says why
    they are on the topic (one the statement check keeps); papers with none are passed."""
    terms = topic_terms(found.topic)
    chosen: list[ListedPaper] = []
    for p in papers:
        if len(chosen) >= n:
            break
        sentence = p.reason or reason(found.scored[p.paper.paper_id], sentence_vectors, terms)
        if sentence:
            chosen.append(ListedPaper(p.paper, p.score, sentence))
    return tuple(chosen)


def _worded(corpus: Corpus, topic: str) -> np.ndarray:
    """Per paper: whether it uses at least half of the topic's indexed words (a cheap
    screen before ``says_topic``, which asks for three quarters and the topic's names)."""
    n = len(corpus.paper_ids)
    ids = corpus.query_terms(topic).ids
    if not ids:
        return np.zeros(n, dtype=bool)
    chunk_of = np.repeat(np.arange(len(corpus.chunk_ids)), np.diff(corpus.token_starts))
    counts = np.zeros(n, dtype=np.int32)
    for forms in ids:
        has = np.zeros(n, dtype=bool)
        has[corpus.chunk_paper_rows[chunk_of[np.isin(corpus.tokens, forms)]]] = True
        counts += has
    return counts >= max(1, len(ids) // 2)


# -- per year ---------------------------------------------------------------------------------
@dataclass(frozen=True)
class Trend:
    """A topic's papers per year within the filters, and the papers themselves."""

    question: str
    found: Members
    years: tuple[YearCount, ...]
    undated: int = 0  # papers on the topic with no year
    papers_by_year: dict[int, tuple[ListedPaper, ...]] = field(default_factory=dict, repr=False)

    @property
    def topic(self) -> str:
        return self.found.topic

    @property
    def indexed_years(self) -> list[int]:
        return [y.year for y in self.years if y.total]

    @property
    def missing_years(self) -> list[int]:
        return [y.year for y in self.years if not y.total]

    @property
    def count(self) -> int:
        return sum(y.count for y in self.years)

    def lead(self) -> str:
        """The first line: what was counted, over what, or why nothing was."""
        topic = f'"{self.topic}"'
        venue = self.found.filters.venue
        papers = f"indexed {venue} papers" if venue else "indexed papers"
        if self.found.vague:
            return _vague(self.found)
        years = self.indexed_years
        if len(years) <= 1:
            only = f"Only one year ({years[0]}) is indexed" if years else "No year is indexed"
            return (
                f"{only}{_scope(self.found)}, so there is no trend to show: {self.count} of "
                f"{self.found.considered} papers match {topic}."
            )
        return (
            f"{self.count} {papers} from {self.years[0].year} to {self.years[-1].year} match "
            f"{topic}; each year's count beside all {papers} of that year:"
        )

    def table(self) -> list[str]:
        """One line per year of the range: count, of all papers indexed, share."""
        if self.found.vague or len(self.indexed_years) <= 1:
            return []
        lines = []
        for y in self.years:
            if not y.total:
                lines.append(f"- {y.year}: no paper indexed")
            else:
                lines.append(f"- {y.year}: {y.count} of {y.total} ({y.share:.1%})")
        if self.undated:
            lines.append(f"- no year given: {self.undated}")
        return lines

    def examples(
        self, sentence_vectors: SentenceVectors
    ) -> list[tuple[str, tuple[ListedPaper, ...]]]:
        """The best papers of each period (the indexed years in ``PERIODS`` spans), oldest
        period first, under its heading: what the counts are made of."""
        years = [y for y in self.indexed_years if self.papers_by_year.get(y)]
        groups = []
        for span in np.array_split(np.array(years), min(PERIODS, len(years))) if years else []:
            pool = sorted(
                (p for y in span for p in self.papers_by_year[int(y)]), key=lambda p: -p.score
            )
            best = explained(self.found, pool, sentence_vectors, EXAMPLES_PER_PERIOD)
            low, high = int(span[0]), int(span[-1])
            groups.append((f"{low}:" if low == high else f"{low}-{high}:", best))
        return groups


def trend(question: str, found: Members, corpus: Corpus) -> Trend:
    """Count ``found`` per year beside every indexed paper of the year, within its filters."""
    filters = found.filters
    totals: Counter[int] = Counter(
        p.year for p in corpus.papers.values() if p.year is not None and filters.matches(p)
    )
    by_year: dict[int, list[ListedPaper]] = {}
    undated = 0
    for p in found.papers:
        if p.paper.year is None:
            undated += 1
        else:
            by_year.setdefault(p.paper.year, []).append(p)
    # from the first to the last year with papers indexed within the filters, gaps included
    span = range(min(totals), max(totals) + 1) if totals else range(0)
    years = tuple(YearCount(y, len(by_year.get(y, ())), totals.get(y, 0)) for y in span)
    return Trend(question, found, years, undated, {y: tuple(v) for y, v in by_year.items()})


# -- per author and per venue -----------------------------------------------------------------
@dataclass(frozen=True)
class AuthorCount:
    """An author, as stored, and their papers on the topic."""

    name: str
    papers: tuple[ListedPaper, ...]


def by_author(found: Members, n: int = 10) -> list[AuthorCount]:
    """The authors with the most papers on the topic, names matched exactly as stored (two
    spellings of one person stay two names; ties by name)."""
    papers: dict[str, list[ListedPaper]] = {}
    for p in found.papers:
        for name in dict.fromkeys(a.strip() for a in p.paper.authors if a.strip()):
            papers.setdefault(name, []).append(p)
    ranked = sorted(papers.items(), key=lambda item: (-len(item[1]), item[0]))
    return [AuthorCount(name, tuple(ps)) for name, ps in ranked[:n]]


def initials_variants(names: Sequence[str]) -> list[tuple[str, str]]:
    """Pairs of stored names that may be one person written two ways ("J. Smith", "John
    Smith"): reported, never merged."""

    def key(name: str) -> tuple[str, str]:
        parts = name.replace(".", " ").split()
        return (parts[-1].lower(), parts[0][:1].lower()) if parts else ("", "")

    seen: dict[tuple[str, str], str] = {}
    pairs = []
    for name in names:
        k = key(name)
        if k in seen and seen[k] != name:
            pairs.append((seen[k], name))
        seen.setdefault(k, name)
    return pairs


# -- answers ----------------------------------------------------------------------------------
def answer_events(
    question: str,
    lead: str,
    table: Sequence[str],
    groups: Sequence[tuple[str, Sequence[ListedPaper]]],
    sentence_vectors: SentenceVectors,
    timings: dict[str, float],
    series: tuple[YearCount, ...] = (),
) -> Iterator[str | Step | Answer]:
    """An answer made of counts from the index (``lead`` and ``table``), then, under each
    group's heading, one cited line per paper, each checked like any answer's statements."""
    papers = [p for _, group in groups for p in group]
    hits = tuple(Hit(p.paper, p.score, (p.reason,), dense_similarity=p.score) for p in papers)
    yield Step("reading", hits, question)
    started = time.perf_counter()
    sources = [
        answering.Source(n, hit, (p.reason,), lists.paper_abstract(n, p.paper, sentence_vectors))
        for n, (hit, p) in enumerate(zip(hits, papers, strict=True), start=1)
    ]
    # one checker over every group: the citations are numbered across the whole answer
    checker = answering.Checker(sources, sentence_vectors.embedder, question)
    parts, n = [lead, *table], 0
    for heading, group in groups:
        before = len(checker.shown)
        own = sources[n : n + len(group)]
        n += len(group)
        lines = "\n".join(lists.reason_line(s.paper, s.sentences[0], s.number) for s in own)
        checker.feed(("\n" if before else "") + lines)
        checker.close()
        if shown := checker.shown[before:].strip():
            parts += [heading, shown]
    timings["generate"] = time.perf_counter() - started
    text = "\n".join(parts)
    yield text
    yield Answer(
        text=text,
        grounded=True,
        query=question,
        citations=checker.citations(),
        hits=hits,
        removed=checker.removed(),
        timings=timings,
        series=series,
    )


# -- questions about authors and venues -------------------------------------------------------
_AUTHORS = re.compile(
    r"^\s*(?:who\s+(?:(?:are|is)\s+(?:the\s+)?(?:\w+\s+){0,2}(?:authors|researchers)|"
    r"(?:works?|worked|working|publish\w*|writes?|wrote|studies|studied|researche?s?)\b)|"
    r"which\s+(?:authors|researchers|people|groups|labs)\b|"
    r"(?:list|name|show)\s+(?:the\s+)?(?:authors|researchers)\b)",
    re.I,
)
# "... authors of X", "... published most on X", "Who works on X": the topic follows the
# last of these words; "papers", "work" and "in this collection" after it are not the topic
_AUTHORS_TOPIC = re.compile(
    r"\b(?:authors?|researchers|people|groups|labs|who|works?|working|publish\w*|"
    r"writ\w*|wrote|papers)\b.*?\b(?:on|about|of|in)\s+(?P<topic>.+)$",
    re.I,
)
_TOPIC_TAIL = re.compile(
    r"\s*(?:\b(?:papers?|works?|research|studies)\b\s*)?"
    r"(?:\b(?:in|of)\s+(?:this|the)\s+(?:collection|index|corpus)|\bhere|\bindexed)?\s*$",
    re.I,
)
_MORE = re.compile(
    r"\b(?:a\s+)?(?:more|less|bigger|larger|smaller)\s+(?:common|popular|frequent|prevalent|"
    r"studied|topic)\b|\bcompared?\b|\bversus\b|\bvs\.?\s",
    re.I,
)


_BY_AUTHOR = re.compile(
    r"^\s*(?i:what|which\s+papers)\s+(?i:has|have|did|does)\s+(?P<author>[A-Z][\w.'-]*"
    r"(?:\s+[A-Z][\w.'-]*){0,3})\s+(?i:published|written|publish|write|worked|work)\s+"
    r"(?i:on|about|in)\s+(?P<topic>.+?)\s*[?.!]*\s*$"
)


def by_author_question(question: str) -> tuple[str, str] | None:
    """("Andreas Krause", "Bayesian optimization") for "What has Andreas Krause published
    on Bayesian optimization?"; None for any other question."""
    m = _BY_AUTHOR.match(question)
    return (m["author"], m["topic"]) if m else None


def asks_authors(question: str) -> bool:
    """ "Who works on X?", "Which authors publish most on X?"."""
    return bool(_AUTHORS.search(question)) and not asks_trend(question)


def authors_topic(question: str) -> str:
    """What an authors question is about ("Who are the most prolific authors of bandit
    papers?" -> "bandit"); its venue and years are taken off before."""
    text = question.strip().rstrip("?.! ")
    if m := _AUTHORS_TOPIC.search(text):
        text = m.group("topic")
    text = _TOPIC_TAIL.sub("", text).strip(" ,")
    return text or question.strip().rstrip("?.! ")


def compared_venues(question: str, venues: Sequence[str]) -> list[str]:
    """The indexed venues a question sets side by side ("more common at ICLR or NeurIPS?")."""
    if not _MORE.search(question):
        return []
    named = [
        (m.start(), v)
        for v in venues
        if (m := re.search(rf"(?<![\w-]){re.escape(v)}(?![\w-])", question, re.I))
    ]
    return [v for _, v in sorted(named)] if len(named) >= 2 else []


def venues_topic(question: str, venues: Sequence[str]) -> str:
    text = question.strip().rstrip("?.! ")
    for v in venues:
        text = re.sub(rf"(?:\b(?:at|in|or|and|than|vs\.?|versus)\s+)*(?<![\w-]){re.escape(v)}"
                      r"(?![\w-])", " ", text, flags=re.I)  # fmt: skip
    text = _MORE.sub(" ", text)
    text = re.sub(
        r"^\s*(?:is|are|was|were|has|have|do|does|did)\s+(?:work\s+on\s+)?", "", text, flags=re.I
    )
    text = re.sub(r"\b(?:at|in|or|and|than|between)\s*$", "", text.strip(), flags=re.I)
    return " ".join(text.split()).strip(" ,") or question


@dataclass(frozen=True)
class VenueCount:
    venue: str
    count: int
    total: int

    @property
    def share(self) -> float | None:
        return self.count / self.total if self.total else None


def by_venue(
    found: Members, corpus: Corpus, venues: Sequence[str]
) -> tuple[list[VenueCount], list[int]]:
    """Each venue's papers on the topic beside all its indexed papers, over only the years
    every one of the venues has papers indexed (returned too): a venue indexed for more
    years does not read as keener on the topic."""
    years_of = {
        v: {p.year for p in corpus.papers.values() if p.venue.lower() == v.lower() and p.year}
        for v in venues
    }
    common = sorted(set.intersection(*years_of.values())) if years_of else []
    shared = set(common)
    counts = []
    for v in venues:
        total = sum(
            1
            for p in corpus.papers.values()
            if p.venue.lower() == v.lower() and p.year in shared and found.filters.matches(p)
        )
        count = sum(
            1 for p in found.papers if p.paper.venue.lower() == v.lower() and p.paper.year in shared
        )
        counts.append(VenueCount(v, count, total))
    return counts, common


# -- the answers to each kind of question -----------------------------------------------------
def _scope(found: Members) -> str:
    where = found.filters.describe()
    return f" ({where})" if where else ""


def _vague(found: Members) -> str:
    return (
        f'"{found.topic}" is too broad to count: it describes most of the {found.considered} '
        f"indexed papers{_scope(found)}. Ask about a narrower topic."
    )


def trend_answer(
    result: Trend, sentence_vectors: SentenceVectors, timings: dict[str, float]
) -> Iterator[str | Step | Answer]:
    groups = [] if result.found.vague else result.examples(sentence_vectors)
    if len(result.indexed_years) <= 1 and result.found.papers:
        n = EXAMPLES_PER_PERIOD * PERIODS
        groups = [("Examples:", explained(result.found, result.found.papers, sentence_vectors, n))]
    series = result.years if len(result.indexed_years) > 1 and not result.found.vague else ()
    yield from answer_events(
        result.question,
        result.lead(),
        result.table(),
        groups,
        sentence_vectors,
        timings,
        series=series,
    )


def authors_answer(
    question: str,
    found: Members,
    ranked: Sequence[AuthorCount],
    sentence_vectors: SentenceVectors,
    timings: dict[str, float],
    per_author: int = 2,
) -> Iterator[str | Step | Answer]:
    if found.vague:
        yield from answer_events(question, _vague(found), [], [], sentence_vectors, timings)
        return
    if not ranked:
        lead = f'No indexed paper{_scope(found)} is on "{found.topic}" with its authors given.'
        yield from answer_events(question, lead, [], [], sentence_vectors, timings)
        return
    shown: dict[str, ListedPaper] = {}
    quoted = {a.name: explained(found, a.papers, sentence_vectors, per_author) for a in ranked}
    for a in ranked:
        for p in quoted[a.name]:
            shown.setdefault(p.paper.paper_id, p)
    number = {pid: n for n, pid in enumerate(shown, start=1)}
    lead = (
        f"The authors with the most of the {len(found.papers)} indexed papers{_scope(found)} "
        f'on "{found.topic}" (names as stored; the numbers are the papers below):'
    )
    table = []
    for a in ranked:
        cited = ", ".join(str(number[p.paper.paper_id]) for p in quoted[a.name])
        rest = len(a.papers) - len(quoted[a.name])
        more = (f" and {rest} more" if cited else f"{rest} not quoted") if rest else ""
        noun = "paper" if len(a.papers) == 1 else "papers"
        table.append(f"- {a.name}: {len(a.papers)} {noun} ({cited}{more})")
    for one, other in initials_variants([a.name for a in ranked]):
        table.append(f'"{one}" and "{other}" may be one person; they are counted apart.')
    groups = [("Papers:", tuple(shown.values()))]
    yield from answer_events(question, lead, table, groups, sentence_vectors, timings)


def venues_answer(
    question: str,
    found: Members,
    counts: Sequence[VenueCount],
    years: Sequence[int],
    sentence_vectors: SentenceVectors,
    timings: dict[str, float],
) -> Iterator[str | Step | Answer]:
    names = " and ".join(c.venue for c in counts)
    table: list[str] = []
    groups: list[tuple[str, tuple[ListedPaper, ...]]] = []
    if found.vague:
        lead = _vague(found)
    elif not years:
        lead = f"{names} have no year in common in the index, so they are not compared."
    else:
        span = str(years[0]) if len(years) == 1 else f"{years[0]}-{years[-1]}"
        gaps = len(years) < years[-1] - years[0] + 1
        lead = (
            f'Papers on "{found.topic}" at {names}, over the years both have papers indexed '
            f"({span}{', not every year' if gaps else ''}):"
        )
        table = [
            f"- {c.venue}: {c.count} of {c.total} papers ({c.share:.1%})"
            if c.share is not None
            else f"- {c.venue}: no paper indexed"
            for c in counts
        ]
        shared = set(years)
        groups = [
            (
                f"{c.venue}:",
                explained(
                    found,
                    [
                        p
                        for p in found.papers
                        if p.paper.venue.lower() == c.venue.lower() and p.paper.year in shared
                    ],
                    sentence_vectors,
                    EXAMPLES_PER_PERIOD,
                ),
            )
            for c in counts
        ]
    yield from answer_events(question, lead, table, groups, sentence_vectors, timings)


def author_papers_answer(
    question: str,
    author: str,
    found: Members,
    sentence_vectors: SentenceVectors,
    timings: dict[str, float],
) -> Iterator[str | Step | Answer]:
    """The papers on a topic by authors whose stored name contains ``author``."""
    n = len(found.papers)
    noun = "paper" if n == 1 else "papers"
    names = sorted(
        {a for p in found.papers for a in p.paper.authors if author.lower() in a.lower()}
    )
    as_stored = f" (stored as {', '.join(repr(x) for x in names)})" if names else ""
    lead = f'{n} indexed {noun} by "{author}"{as_stored} match "{found.topic}"' + (
        ":" if n else "."
    )
    groups = [("Papers:", explained(found, found.papers, sentence_vectors, 20))] if n else []
    yield from answer_events(question, lead, [], groups, sentence_vectors, timings)
