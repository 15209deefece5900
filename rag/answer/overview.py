"""Questions about a whole venue or year ("What are the main themes of ICML 2026?"),
answered from its topics (``rag.answer.topics``), each statement checked like any other answer.

question -> is it about the whole collection? (its words, less the venue and year it names,
are only words of asking for themes) -> the topics of that venue and year -> per theme, a
line naming it, its size and representative papers whose abstracts contain the theme's
words, then for each of those papers the sentence of its abstract that says most of the
theme -> the same ``Checker`` as every answer: a theme line stands for the papers whose
abstracts have every word of the theme's name; a paper's line, as any statement does.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence

from ..index.embedder import Embedder
from ..index.lexical import tokenize
from ..retrieve.search import Filters
from ..text.instructions import abstract_sentences
from ..types import Answer, Hit, Paper, Step
from . import answering
from .answering import SentenceVectors
from .support import (
    GENERIC_STEMS,
    Abstract,
    Statement,
    Verdict,
    about_earlier_work,
    is_boilerplate,
    plain,
    speaks_of_itself,
)
from .topics import Topic, document

MAX_THEMES = 8  # themes an answer names; the rest are counted
PER_THEME = 2  # representative papers cited per theme

# the words a question about the whole collection is made of; one of _ASKING_FOR among them
_OVERVIEW_WORDS = frozenset(
    "what what's whats which are is was were the a an of in at on to for from me us give "
    "tell show list summarize summarise summary overview overall main major key common "
    "recurring recur recurs recurrent central dominant biggest big important general "
    "broad themes theme topics topic trends trend areas area research directions direction "
    "fields field subjects subject about cover covers covered this these those all papers "
    "paper conference accepted indexed index collection venue year proceedings there do "
    "does did they mostly cover discussed discuss studied kinds kind of work works".split()
)
_ASKING_FOR = re.compile(
    r"\b(themes?|topics?|overview|trends?|areas?|directions?|fields?|subjects?|about|"
    r"summari[sz]e|summary|cover(?:s|ed)?|recurs?|recurring)\b",
    re.I,
)
_OTHERS = re.compile(r"\bet al\b")  # a sentence about someone else's paper
_THEME_LINE = re.compile(r"^Theme: (?P<label>.+?) \((?P<size>\d+) papers?\): ")


def asks_overview(question: str, venues: Sequence[str]) -> bool:
    """Whether the question asks what a whole venue, year or index is about, rather than
    about some papers ("What are the main themes of ICML 2026?", "What topics recur?")."""
    from .question import parse_filters

    _, rest = parse_filters(question, venues)
    words = re.findall(r"[a-z']+", rest.lower())
    return bool(_ASKING_FOR.search(rest)) and bool(words) and set(words) <= _OVERVIEW_WORDS


# -- the reply -------------------------------------------------------------------------------
def theme_stems(label: str) -> set[str]:
    """The stems a theme's name asserts."""
    return {s for s in tokenize(label) if s not in GENERIC_STEMS}


def stated_label(topic: Topic) -> str:
    """The topic's label when one of its papers has all its words, else its best term:
    a theme line can only cite papers that say the theme's name."""
    stems = [set(tokenize(document(p))) for p in topic.papers]
    for label in (topic.label, topic.term_label, *topic.terms):
        if any(theme_stems(label) <= s for s in stems):
            return label
    return topic.label


def representatives(topic: Topic, label: str, n: int = PER_THEME) -> list[Paper]:
    """The most central papers whose title and abstract have every word of the label."""
    wanted = theme_stems(label)
    return [p for p in topic.papers if wanted <= set(tokenize(document(p)))][:n]


def theme_sentence(paper: Paper, label: str, terms: Sequence[str]) -> str:
    """The abstract's sentence that says most of the theme's name, then of its own work
    ("we ..."), then of its other terms; never one about earlier work or where the code is."""
    sentences = list(abstract_sentences(paper.abstract))
    wanted = theme_stems(label)
    others = {s for t in terms for s in tokenize(t)}

    name = answering.paper_name(paper)

    def score(i: int) -> tuple[bool, int, bool, int, int]:
        s = sentences[i]
        said, own = set(tokenize(plain(s))), speaks_of_itself(s, name)
        return (own and wanted <= said, len(wanted & said), own, len(others & said), -i)

    usable = [
        i
        for i, s in enumerate(sentences)
        if not is_boilerplate(s) and not about_earlier_work(s, name) and not _OTHERS.search(s)
    ]
    return sentences[max(usable or [0], key=score)]


def reply(topics: list[Topic]) -> tuple[str, list[Paper]]:
    """The answer's lines, with markers numbering the papers returned (first cited first)."""
    papers: list[Paper] = []
    lines = []
    for topic in topics[:MAX_THEMES]:
        label = stated_label(topic)
        chosen = representatives(topic, label)
        if not chosen:
            continue
        numbers = []
        for p in chosen:
            papers.append(p)
            numbers.append(len(papers))
        names = ", ".join(f"{_name(p)} [{n}]" for p, n in zip(chosen, numbers, strict=True))
        plural = "s" if topic.size != 1 else ""
        lines.append(f"Theme: {label} ({topic.size} paper{plural}): {names}.")
        for p, n in zip(chosen, numbers, strict=True):
            said = theme_sentence(p, label, topic.terms).rstrip(" .")
            lines.append(f"- {p.title}: {said} [{n}].")
    return "\n".join(lines), papers


def _name(paper: Paper) -> str:
    return answering.paper_name(paper) or paper.title


def lead(topics: list[Topic], where: str) -> str:
    """The sentence before the themes: counts the index itself gives, not an abstract."""
    papers = sum(t.size for t in topics)
    shown = min(len(topics), MAX_THEMES)
    grouped = f"The {papers:,} {where}paper{'s' if papers != 1 else ''} fall into "
    grouped += f"{len(topics)} theme{'s' if len(topics) != 1 else ''} by what their abstracts say"
    if shown < len(topics):
        rest = sum(t.size for t in topics[shown:])
        return f"{grouped}; the {shown} largest ({rest:,} papers are in the other themes):"
    return f"{grouped}, largest first:"


def selection_words(filters: Filters) -> str:
    """ "ICML 2026 " for the papers of a venue and year."""
    years = ""
    if filters.year_min is not None and filters.year_min == filters.year_max:
        years = str(filters.year_min)
    elif filters.year_min is not None or filters.year_max is not None:
        years = f"{filters.year_min or ''}–{filters.year_max or ''}"
    words = " ".join(w for w in (filters.venue or "", years) if w)
    return f"{words} " if words else "indexed "


# -- checking ----------------------------------------------------------------------------------
class ThemeChecker(answering.Checker):
    """The answer checker, which also judges theme lines: a theme line stands for the cited
    papers whose abstracts have every word of the theme's name, at the size the topic has."""

    def __init__(
        self,
        sources: list[answering.Source],
        embedder: Embedder,
        question: str,
        topics: list[Topic],
    ) -> None:
        super().__init__(sources, embedder, question)
        self.sizes = {stated_label(t): t.size for t in topics}

    def _judge(self, statement: Statement) -> Verdict:
        m = _THEME_LINE.match(statement.text)
        if not m:
            return super()._judge(statement)
        label, size = m.group("label"), int(m.group("size"))
        if self.sizes.get(label) != size:
            return Verdict(statement, (), reason="no theme of that name has that many papers")
        wanted = theme_stems(label)
        kept = [n for n in statement.cites if n in self.abstracts and wanted <= self._stems(n)]
        if not kept:
            return Verdict(statement, (), reason=f'no cited abstract says "{label}"')
        quotes = tuple(self._quote(n, wanted) for n in kept)
        return Verdict(statement, tuple(kept), quotes)

    def _stems(self, number: int) -> set[str]:
        abstract = self.abstracts[number]
        return set(tokenize(plain(f"{abstract.title}. {' '.join(abstract.sentences)}")))

    def _quote(self, number: int, wanted: set[str]) -> str:
        """The sentence with most of the theme's words, one about the paper's own work first."""
        abstract = self.abstracts[number]
        return max(
            abstract.sentences,
            key=lambda s: (
                len(wanted & set(tokenize(plain(s)))),
                not about_earlier_work(s, abstract.name),
            ),
        )


def sources_for(papers: list[Paper], sentence_vectors: SentenceVectors) -> list[answering.Source]:
    sources = []
    for n, paper in enumerate(papers, start=1):
        sentences = abstract_sentences(paper.abstract)
        vectors = sentence_vectors(list(sentences))
        abstract = Abstract.of(n, paper.title, paper.abstract, vectors, sentence_vectors)
        sources.append(answering.Source(n, Hit(paper, 1.0), sentences, abstract))
    return sources


def answer(
    query: str,
    topics: list[Topic],
    filters: Filters,
    sentence_vectors: SentenceVectors,
    timings: dict[str, float],
) -> Iterator[str | Step | Answer]:
    """Steps and checked text as the overview is written, then the final ``Answer``."""
    started = time.perf_counter()
    text, papers = reply(topics)
    hits = tuple(Hit(p, 1.0) for p in papers)
    yield Step("reading", hits, query)
    if not papers:
        refused = answering.refusal(query, [], timings)
        yield refused.text
        yield refused
        return
    opening = lead(topics, selection_words(filters))
    yield opening + "\n"
    sources = sources_for(papers, sentence_vectors)
    checker = ThemeChecker(sources, sentence_vectors.embedder, query, topics)
    for line in text.splitlines(keepends=True):
        if shown := checker.feed(line):
            yield shown
    if shown := checker.close():
        yield shown
    timings["generate"] = time.perf_counter() - started
    yield Answer(
        text=f"{opening}\n{checker.shown}".strip(),
        grounded=bool(checker.citations()),
        query=query,
        citations=checker.citations(),
        hits=hits,
        removed_citations=checker.removed_markers,
        removed=checker.removed(),
        timings=timings,
        coverage="answered" if checker.citations() else "not_covered",
    )
