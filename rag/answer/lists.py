"""Questions that ask for every paper, and a paper's neighbours.

"Which papers ...", "List papers on ...", "How many papers ...": question -> its topic (the
asking words taken off) -> the papers within the filters whose stored chunk vectors, or
whose words, come nearest the topic (``POOL`` and ``LEXICAL_POOL`` of them) -> each one's
abstract sentences scored against the topic, and whether its abstract says what the topic
is about (``rag.answer.premise``, with the field's names for one thing, ``CONCEPTS``) -> every
paper over the bars (``Bars``, calibrated by ``bench/lists.py``) -> each with the sentence
of its own abstract that says why, one the statement check (``rag.answer.support.judge``) keeps,
best first. The decision rests on the topic's cosine similarity to abstract sentences and
on its words, not on the search's fused scores, so it does not move when the fusion does.

Related papers: a paper's mean chunk vector against every stored chunk, one hit per paper.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

import numpy as np

from ..index.lexical import tokenize, top_chunks
from ..index.snapshot import Corpus
from ..retrieve.search import Filters, dense_top
from ..text.instructions import abstract_sentences
from ..types import Answer, Hit, Paper, Step
from . import answering, rules
from . import judge as judges
from . import premise as premises
from .answering import SentenceVectors
from .judge import Judge
from .support import (
    GENERIC_STEMS,
    Abstract,
    about_earlier_work,
    is_boilerplate,
    judge,
    plain,
    speaks_of_itself,
    split_statements,
)

# A paper is listed when one of its abstract sentences comes within ``LIST_MIN_SIMILARITY``
# of the topic, or within ``LIST_MIN_SIMILARITY_SAID`` while its abstract says what the topic
# is about, and it is not far below the best paper admitted (``rules``, with why).
LIST_MIN_SIMILARITY = rules.LIST_MIN_SIMILARITY
LIST_MIN_SIMILARITY_SAID = rules.LIST_MIN_SIMILARITY_SAID
LIST_MARGIN = rules.LIST_MARGIN
POOL = 120  # papers nearest the topic by stored chunk vectors whose sentences are scored
LEXICAL_POOL = 80  # ... and the papers BM25 puts first, which the vectors may rank lower
OWN_REASON_MARGIN = 0.3  # how much farther from the topic a sentence of the paper's own
OWN_REASON_MIN = 0.28  # work may be than its closest sentence, and still be its reason
REASONS_TRIED = 4  # sentences tried per paper for a reason the statement check keeps

_LIST = re.compile(
    r"^\s*(?:(?:which|what)\s+(?:[\w-]+\s+){0,3}?(?:papers|works|studies|articles)\b|"
    r"how\s+many\s+(?:[\w-]+\s+){0,3}?(?:papers|works|studies|articles)\b|"
    r"(?:list|enumerate)\b|count\s+(?:the\s+)?papers\b|"
    r"(?:find|show|give|name)\s+(?:me\s+)?(?:all\s+|every\s+)?(?:the\s+)?(?:[\w-]+\s+)?"
    r"(?:papers|works|studies)\b|(?:all|every)\s+papers?\b|"
    r"(?:are\s+there\s+(?:any\s+)?(?:[\w-]+\s+)?papers)\b)",
    re.I,
)
_COUNT = re.compile(r"^\s*(?:how\s+many|count)\b", re.I)
_LEAD = re.compile(
    r"^(?:(?:all|every|the|of|here|indexed|in\s+the\s+index|me|papers?|works?|studies|"
    r"articles?|are|is|were|there|do|does|that|which|who|about|on|regarding|concerning|"
    r"dealing\s+with|deal\s+with|related\s+to|in|with|for|,)\s+)+",
    re.I,
)


def is_list_question(question: str) -> bool:
    """The question asks for every paper that does something, or how many do."""
    m = _LIST.search(question)
    if m is None:
        return False
    # the papers another subject does something with are not what the index holds on a
    # topic (``premises.OBJECT_OF``); "How many papers does the index hold on X?" counts
    return asks_count(question) or not premises.OBJECT_OF.match(question[m.end() :])


def asks_count(question: str) -> bool:
    return bool(_COUNT.search(question))


def list_topic(question: str) -> str:
    """What a list question is about: "How many papers are about reinforcement learning?"
    -> "reinforcement learning"."""
    m = _LIST.search(question)
    rest = question[m.end() :] if m else question
    rest = _LEAD.sub("", rest.strip() + " ").strip()
    rest = re.sub(r"\s*(?:here|in the index|indexed)?\s*[?.!]+\s*$", "", rest).strip()
    # how the question asks ("study", "give", "try to", "involve"), not what about; kept
    # when the rest says nothing of its own ("contribute a new benchmark or dataset")
    words = rest.split()
    while len(words) > 2 and (words[0].lower() == "to" or _asks(words[0])):
        if words[0].lower() in ("why", "how", "what", "which", "whether", "when", "where"):
            break  # "explain why X works" is about why
        if not premises.terms(" ".join(words[1:])):
            break
        words = words[1:]
    rest = " ".join(words)
    return rest or question.strip().rstrip("?.! ")


def _asks(word: str) -> bool:
    stems = tokenize(word)
    return bool(stems) and set(stems) <= premises.ASKING_STEMS | GENERIC_STEMS


@dataclass(frozen=True)
class ListedPaper:
    """A paper a list question finds: its relevance (the cosine of its closest abstract
    sentence to the topic) and the sentence of its own abstract that says why."""

    paper: Paper
    score: float
    reason: str


@dataclass(frozen=True)
class PaperList:
    """Every indexed paper relevant to a list question, within its filters, best first."""

    question: str
    topic: str
    papers: tuple[ListedPaper, ...]
    filters: Filters = Filters()

    @property
    def count(self) -> int:
        return len(self.papers)

    @property
    def lead(self) -> str:
        """The count, as the answer's first line: 2 indexed papers match "model merging":"""
        n = self.count
        where = f" ({self.filters.describe()})" if self.filters else ""
        noun = "paper" if n == 1 else "papers"
        verb = "matches" if n == 1 else "match"
        return f"{n} indexed {noun}{where} {verb} {_quoted(self.topic)}:"

    def lines(self, start: int = 0, stop: int | None = None) -> list[str]:
        """One cited line per paper, numbered from 1 over the whole list."""
        return [
            reason_line(p.paper, p.reason, n)
            for n, p in enumerate(self.papers[start:stop], start=start + 1)
        ]


def _quoted(topic: str) -> str:
    return f'"{topic}"'


def reason_line(paper: Paper, sentence: str, number: int) -> str:
    return f"- {paper.title}: {sentence.strip().rstrip(' .')} [{number}]."


# -- finding every relevant paper ----------------------------------------------------------------
@dataclass(frozen=True)
class Bars:
    """When a candidate is relevant: its best sentence reaches ``similarity``, or reaches
    ``similarity_said`` while its abstract says what the topic is about."""

    similarity: float = LIST_MIN_SIMILARITY
    similarity_said: float = LIST_MIN_SIMILARITY_SAID
    margin: float = LIST_MARGIN

    def admit(self, c: Candidate) -> bool:
        return c.relevance >= self.similarity or (
            c.relevance >= self.similarity_said and c.says_topic
        )


@dataclass(frozen=True)
class Candidate:
    """A paper that may be relevant: its sentences scored against the topic, and whether
    its abstract says what the topic is about."""

    scored: answering.ScoredHit
    says_topic: bool

    @property
    def relevance(self) -> float:
        return self.scored.relevance

    @property
    def paper(self) -> Paper:
        return self.scored.hit.paper


def find_all(
    corpus: Corpus,
    sentence_vectors: SentenceVectors,
    vectors: np.ndarray,
    question: str,
    filters: Filters,
    bars: Bars | None = None,
    judge: Judge | None = None,
) -> PaperList:
    """Every paper within ``filters`` relevant to the list question ``question``: those the
    ``judge`` (the local model, ``rag.answer.judge``) holds to be asked for, of the closest
    candidates; without one, those over the ``bars``."""
    topic = list_topic(question)
    bars = bars or Bars()
    candidates = candidates_for(corpus, sentence_vectors, vectors, topic, filters)
    closest = sorted(candidates, key=lambda c: -c.relevance)
    if judge is not None and judges.JUDGED:
        held = {p.paper_id for p, _ in judges.judged(judge, question, [c.paper for c in closest])}
        admitted = [c for c in closest if c.paper.paper_id in held]
        floor = float("-inf")
    else:
        admitted = [c for c in closest if bars.admit(c)]
        floor = admitted[0].relevance - bars.margin if admitted else 0.0
    listed = []
    for c in admitted:
        if c.relevance < floor:
            break
        sentence = reason(c.scored, sentence_vectors, topic_terms(topic))
        if sentence:
            listed.append(ListedPaper(c.scored.hit.paper, round(c.relevance, 4), sentence))
    return PaperList(question, topic, tuple(listed), filters)


def candidates_for(
    corpus: Corpus,
    sentence_vectors: SentenceVectors,
    vectors: np.ndarray,
    topic: str,
    filters: Filters,
) -> list[Candidate]:
    """The papers that may be relevant to a topic, each abstract sentence scored."""
    mask = chunk_mask(corpus, filters)
    vector = sentence_vectors.embedder.embed_query(topic)
    by_cosine: dict[str, float] = {}
    for chunk, sim in dense_top(vectors, vector, POOL * 3, mask):
        by_cosine.setdefault(corpus.chunk_papers[chunk], sim)
        if len(by_cosine) >= POOL:
            break
    best_words = top_chunks(corpus.lexical_scores(topic, mask), LEXICAL_POOL)
    lexical = [corpus.chunk_papers[c] for c, _ in best_words]
    hits = [
        Hit(corpus.papers[pid], score=by_cosine.get(pid, 0.0), dense_similarity=by_cosine.get(pid))
        for pid in dict.fromkeys([*by_cosine, *lexical])
    ]
    scored = answering.score_hits(topic, hits, sentence_vectors)
    scored = with_concepts(scored, vector, sentence_vectors)
    terms = topic_terms(topic)
    return [Candidate(s, says_topic(topic, terms, s.hit.paper)) for s in scored]


def topic_terms(topic: str) -> list[str]:
    """The stems an abstract must say to be about the topic: a find question's terms, and
    the topic's own words too (a find question's terms leave out words of asking, and
    "contrastive" is one, "compare and contrast", but in "contrastive learning" it is the
    topic)."""
    return list(dict.fromkeys([*premises.terms(topic), *topic_words(topic)]))


def with_concepts(
    scored: list[answering.ScoredHit], topic: np.ndarray, sentence_vectors: SentenceVectors
) -> list[answering.ScoredHit]:
    """Sentences that use one of the field's names for a concept scored again with the
    concept's first name added ("... GRPO ... (reinforcement learning)"): the embedder does
    not know that GRPO is reinforcement learning. A sentence keeps its better score."""
    told = {
        (n, i): f"{plain(x)} ({', '.join(names)})"
        for n, s in enumerate(scored)
        for i, x in enumerate(s.sentences)
        if (names := _unsaid_concepts(x))
    }
    if not told:
        return scored
    sims = sentence_vectors(list(told.values())) @ topic
    better = [s.similarities.copy() for s in scored]
    for (n, i), sim in zip(told, sims, strict=True):
        better[n][i] = max(better[n][i], float(sim))
    return [replace(s, similarities=b) for s, b in zip(scored, better, strict=True)]


def _unsaid_concepts(sentence: str) -> list[str]:
    """The first names of the concepts a sentence names otherwise ("GRPO" ->
    "reinforcement learning"), less those it says itself."""
    text = plain(sentence)
    said = {n for m in _CONCEPT.finditer(text) for n in _concepts(m)}
    return sorted(n for n in said if n not in text.lower())


def says_topic(topic: str, terms: list[str], paper: Paper) -> bool:
    """Whether the paper's abstract has the topic's names, the field's concepts it names
    (by any of their names: "GRPO" says "reinforcement learning") and three quarters of its
    terms, as a find question's premise is checked (``rag.answer.premise``)."""
    abstract = Abstract.words_of(paper.title, paper.abstract)
    named = {n for m in _CONCEPT.finditer(abstract.text_lower) for n in _concepts(m)}
    extra = {s for name in named for s in tokenize(name)}
    abstract = replace(abstract, stems=abstract.stems | extra)
    concepts = {_concepts(m)[0] for m in _CONCEPT.finditer(plain(topic))}
    # a topic offering alternatives ("vision-language or multimodal language models") needs
    # one side, which the premise checks; otherwise every concept it names
    if not premises.alternatives(topic) and any(
        premises.missing(tokenize(c), abstract) for c in concepts
    ):
        return False
    required = premises.named_phrases(topic)
    return premises.premise(topic, terms, [abstract], required).holds


# Names the field uses for one thing ("reinforcement learning", "GRPO"; ``rules``).
CONCEPTS = rules.CONCEPTS
_CONCEPT = re.compile(
    r"(?<![\w-])("
    + (
        "|".join(sorted((re.escape(a) for names in CONCEPTS for a in names), key=len, reverse=True))
        or rules.NEVER
    )
    + r")s?(?![\w-])",
    re.I,
)
_NAMES_OF = {a: tuple(g[0] for g in CONCEPTS if a in g) for names in CONCEPTS for a in names}


def _concepts(match: re.Match[str]) -> tuple[str, ...]:
    """The first names of the concepts a matched name is one of (its own group's first)."""
    return _NAMES_OF[match.group(1).lower()]


# how a question asks for its topic ("Which papers involve ...", "... try to explain ...")
_HOW_ASKED_STEMS = frozenset(tokenize(premises.HOW_ASKED))


def topic_words(topic: str) -> list[str]:
    """The stems a topic is about (all its words when every one is generic: "evaluation")."""
    stems = tokenize(topic.replace("-", " "))
    content = [
        s for s in stems if s not in GENERIC_STEMS | premises.CLAIMING_STEMS | _HOW_ASKED_STEMS
    ]
    return list(dict.fromkeys(content or stems))


def chunk_mask(corpus: Corpus, filters: Filters) -> np.ndarray | None:
    """1 for each chunk whose paper passes the filters, 0 otherwise; None: no filters."""
    if not filters:
        return None
    allowed = np.fromiter(
        (filters.matches(p) for p in corpus.papers.values()), dtype=bool, count=len(corpus.papers)
    )
    return allowed[corpus.chunk_paper_rows].astype(np.float32)


def reason(
    s: answering.ScoredHit, sentence_vectors: SentenceVectors, terms: Sequence[str] = ()
) -> str:
    """The sentence of the paper's abstract in which the paper speaks of its own work that
    says most of the topic's ``terms``, then comes closest to the topic, and that the
    statement check keeps; "" if none."""
    paper = s.hit.paper
    abstract = Abstract.of(1, paper.title, paper.abstract, s.vectors, sentence_vectors)
    embed_query = sentence_vectors.embedder.embed_query
    for i in _reason_order(s, abstract, terms)[:REASONS_TRIED]:
        statement = split_statements(reason_line(paper, s.sentences[i], 1), [paper.title])[0]
        if judge(statement, embed_query(plain(statement.text)), {1: abstract}).kept:
            return s.sentences[i]
    return ""


def _reason_order(
    s: answering.ScoredHit, abstract: Abstract, terms: Sequence[str] = ()
) -> list[int]:
    """Sentences best first: the paper's own work first (those saying more of the topic's
    terms before the others), then the rest; never boilerplate."""

    def own(i: int) -> bool:
        x = s.sentences[i]
        if _OWN_RESULTS.match(plain(x)):  # "Experiments on ... demonstrate ..."
            return True
        return speaks_of_itself(x, abstract.name) and not about_earlier_work(x, abstract.name)

    def says(i: int) -> int:
        stems = set(tokenize(plain(s.sentences[i]).replace("-", " ")))
        return sum(t in stems for t in terms)

    order = [int(i) for i in np.argsort(-s.similarities) if not is_boilerplate(s.sentences[i])]
    best = float(s.similarities[order[0]]) if order else 0.0
    # what the paper does ("we propose ...") rather than the field's background ("The rise
    # of model hubs ..."), unless only the background comes near the topic
    close = [
        i
        for i in order
        if s.similarities[i] >= max(best - OWN_REASON_MARGIN, OWN_REASON_MIN) and own(i)
    ]
    close.sort(key=says, reverse=True)  # stable: closest first among those saying as much
    return [*close, *(i for i in order if i not in close)]


_OWN_RESULTS = re.compile(r"(?:extensive\s+|our\s+)?(?:experiments|evaluations?|results)\b", re.I)


# -- related papers ------------------------------------------------------------------------------
def related(
    corpus: Corpus, vectors: np.ndarray, paper: Paper, k: int, filters: Filters
) -> list[Hit]:
    """The ``k`` papers nearest ``paper`` by its stored vectors, within ``filters``."""
    own = corpus.paper_chunks.get(paper.paper_id, [])
    if not own:
        return []
    centre = np.asarray(vectors[own]).mean(axis=0)
    centre /= max(float(np.linalg.norm(centre)), 1e-12)
    mask = chunk_mask(corpus, filters)
    mine = np.zeros(len(corpus.chunk_ids), dtype=np.float32)
    mine[own] = 1.0
    mask = (1.0 - mine) if mask is None else mask * (1.0 - mine)
    best: dict[str, float] = {}
    for chunk, sim in dense_top(vectors, centre, (k + 1) * 4, mask):
        best.setdefault(corpus.chunk_papers[chunk], sim)
    order = sorted(best, key=lambda pid: -best[pid])[:k]
    return [Hit(corpus.papers[pid], score=best[pid], dense_similarity=best[pid]) for pid in order]


def resolve(corpus: Corpus, name: str | Paper) -> Paper | None | list[Paper]:
    """The paper ``name`` means: a Paper, an id, a title, or the method name a title gives
    ("CSR"); a list of the candidates when several match, None when none does."""
    if isinstance(name, Paper):
        return corpus.papers.get(name.paper_id, name)
    text = name.strip()
    if text in corpus.papers:
        return corpus.papers[text]
    folded = _fold(text)
    for match in (
        lambda p: _fold(p.title) == folded,
        lambda p: _fold(answering.paper_name(p)) == folded,
        lambda p: folded in _fold(p.title),
    ):
        found = [p for p in corpus.papers.values() if match(p)]
        if len(found) == 1:
            return found[0]
        if found:
            return found
    return None


def _fold(text: str) -> str:
    return re.sub(r"\W+", " ", plain(text).lower()).strip()


# -- the list as an answer -----------------------------------------------------------------------
def answer_events(
    found: PaperList,
    sentence_vectors: SentenceVectors,
    timings: dict[str, float],
) -> Iterator[str | Step | Answer]:
    """A list question's answer: the count, then a cited line per paper, each line checked
    like any answer's statements (the count is of the lines that stand)."""
    hits = tuple(Hit(p.paper, p.score, (p.reason,), dense_similarity=p.score) for p in found.papers)
    yield Step("reading", hits, found.question)
    started = time.perf_counter()
    sources = [
        answering.Source(n, hit, (p.reason,), paper_abstract(n, p.paper, sentence_vectors))
        for n, (hit, p) in enumerate(zip(hits, found.papers, strict=True), start=1)
    ]
    checker = answering.Checker(sources, sentence_vectors.embedder, found.question)
    checker.feed("\n".join(found.lines()))
    checker.close()
    citations = checker.citations()
    kept = {c.paper.paper_id for c in citations}
    lead = replace(found, papers=tuple(p for p in found.papers if p.paper.paper_id in kept)).lead
    timings["generate"] = time.perf_counter() - started
    text = f"{lead}\n{checker.shown.strip()}"
    yield text
    yield Answer(
        text=text,
        grounded=True,
        query=found.question,
        citations=citations,
        hits=hits,
        removed=checker.removed(),
        timings=timings,
        listing=True,
    )


def paper_abstract(number: int, paper: Paper, sentence_vectors: SentenceVectors) -> Abstract:
    sentences = list(abstract_sentences(paper.abstract))
    vectors = sentence_vectors(sentences)
    return Abstract.of(number, paper.title, paper.abstract, vectors, sentence_vectors)


def above(
    question: str, hits: list[Hit], sentence_vectors: SentenceVectors, min_similarity: float
) -> list[Hit]:
    """The hits relevant to a question: one of their abstract sentences reaches
    ``min_similarity`` (cosine), or the question names the paper."""
    scored = answering.score_hits(question, hits, sentence_vectors)
    return [s.hit for s in scored if s.relevance >= min_similarity]


def unresolved(name: str | Paper, found: list[Paper] | None) -> str:
    """What to do when ``name`` names no paper, or several."""
    if not found:
        return f"No indexed paper is called {str(name)!r}. Pass a paper id or title (`rag search`)."
    some = "; ".join(f"{p.paper_id} ({p.title[:60]})" for p in found[:5])
    return f"{len(found)} papers match {str(name)!r}: {some}. Pass one's id."
