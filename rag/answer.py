"""Hits to an answer: numbered sources, generation, then every citation checked.

question -> hits -> sources (numbered here, not by the model) -> reply -> checked citations.
A marker that names no source is removed and counted; each kept citation carries the
abstract sentence that best supports the statement citing it; a claim with no source is
flagged. When nothing retrieved is relevant enough the LLM is not called at all.
"""

from __future__ import annotations

import re
import threading
import weakref
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np

from .chunking import split_sentences
from .embedder import Embedder
from .types import Answer, Citation, Hit, Paper

REFUSAL = "The indexed papers do not cover this question."
# Small local models answer "the sources do not answer" far too often when offered that
# way out, so the prompt does not offer it: retrieval decides what is covered, and a reply
# that says so anyway is still caught by ``says_no_answer``.
SYSTEM_PROMPT = (
    "Answer the question from the numbered sources in two to four sentences. Refer to each "
    "paper by its method name, never by its number alone, and end each sentence with the "
    "number of its source in brackets.\n"
    "Example answer: FooNet speeds up graph training by 2x [1]. BarGAN applies the same idea "
    "to images [2]."
)
_MARKER = re.compile(r"\s?\[(\d+(?:\s*(?:,|-|–)\s*\d+)*)\]")
_NO_ANSWER = re.compile(
    r"(sources?|context|papers?|information)[^.]{0,60}\b(do|does|did)\s*(not|n't)\s+"
    r"(answer|contain|mention|provide|address|discuss|cover|include)|\bno information\b|"
    r"\bcannot (?:be )?answer",
    re.IGNORECASE,
)
RELEVANCE_MARGIN = 0.15  # how far below the best paper a paper may be and still be a source
SUPPORT_MIN = 0.55  # cosine at which an abstract sentence is taken to state an uncited claim


@dataclass(frozen=True)
class Source:
    """A retrieved paper as the model sees it: its number and its most relevant sentences."""

    number: int
    hit: Hit
    sentences: tuple[str, ...]

    @property
    def paper(self) -> Paper:
        return self.hit.paper

    def render(self) -> str:
        p = self.paper
        head = f"[{self.number}] {p.title}" + (f" ({p.venue_year})" if p.venue_year else "")
        return f"{head}\n{plain(' '.join(self.sentences))}"


def plain(text: str) -> str:
    """Drop LaTeX formatting commands the model would only stumble over."""
    text = re.sub(r"\\(?:textbf|textit|emph|texttt|mathrm|text|url)\{([^{}]*)\}", r"\1", text)
    return text.replace("\\%", "%").replace("\\&", "&")


@dataclass(frozen=True)
class ScoredHit:
    """A hit with each abstract sentence's similarity to the question."""

    hit: Hit
    sentences: tuple[str, ...]
    similarities: np.ndarray
    named: bool  # the question names the paper's method ("the CSR paper")

    @property
    def relevance(self) -> float:
        return 1.0 if self.named else float(self.similarities.max(initial=-1.0))


_SENTENCE_CACHE: weakref.WeakKeyDictionary[Embedder, OrderedDict[str, np.ndarray]] = (
    weakref.WeakKeyDictionary()
)
_SENTENCE_CACHE_SIZE = 50_000  # ~75 MB of vectors: the abstracts of a few thousand papers
_SENTENCE_LOCK = threading.Lock()


def sentence_vectors(embedder: Embedder, sentences: list[str]) -> np.ndarray:
    """Vectors of abstract sentences, kept across questions: the same papers come back often."""
    with _SENTENCE_LOCK:
        cache = _SENTENCE_CACHE.setdefault(embedder, OrderedDict())
        missing = list(dict.fromkeys(s for s in sentences if s not in cache))
    fresh = embedder.embed(missing) if missing else None
    with _SENTENCE_LOCK:
        for text, vector in zip(missing, fresh if fresh is not None else [], strict=True):
            cache[text] = vector
        rows = []
        for s in sentences:
            cache.move_to_end(s)
            rows.append(cache[s])
        while len(cache) > _SENTENCE_CACHE_SIZE:
            cache.popitem(last=False)
    return np.stack(rows) if rows else np.zeros((0, embedder.dim), dtype=np.float32)


def score_hits(question: str, hits: list[Hit], embedder: Embedder) -> list[ScoredHit]:
    """Score every abstract sentence of the hits against the question.

    Sentence-level similarity separates relevant from unrelated papers far better than
    whole-chunk similarity: a question usually matches one or two sentences of an abstract.
    """
    per_paper = [tuple(split_sentences(h.paper.abstract) or [h.paper.abstract]) for h in hits]
    flat = [s for sentences in per_paper for s in sentences]
    sims = sentence_vectors(embedder, flat) @ embedder.embed_query(question)
    scored, offset = [], 0
    for hit, sentences in zip(hits, per_paper, strict=True):
        part = sims[offset : offset + len(sentences)]
        offset += len(sentences)
        scored.append(ScoredHit(hit, sentences, part, names_paper(question, hit.paper)))
    return scored


def paper_name(paper: Paper) -> str:
    """The short name a title gives its method ("CSR", "R³-Bench"), or "" if none."""
    head = re.split(r"\s*[:(]", paper.title, maxsplit=1)[0].strip()
    if len(head.split()) > 2 or head == paper.title.strip() and len(head.split()) > 1:
        return ""
    return head if len(head) >= 3 and re.search(r"[A-Z0-9²³]", head) else ""


def names_paper(question: str, paper: Paper) -> bool:
    name = paper_name(paper)
    return bool(name) and re.search(rf"(?<![\w-]){re.escape(name)}(?![\w-])", question) is not None


def build_sources(
    scored: list[ScoredHit], embedder: Embedder, token_budget: int = 650
) -> list[Source]:
    """Number the relevant hits and keep, per paper, the sentences closest to the question."""
    if not scored:
        return []
    budget = token_budget // len(scored)
    return [
        Source(
            n,
            s.hit,
            tuple(
                s.sentences[i]
                for i in _best_within(list(s.sentences), s.similarities, budget, embedder)
            ),
        )
        for n, s in enumerate(scored, start=1)
    ]


def _best_within(
    sentences: list[str], scores: np.ndarray, budget: int, embedder: Embedder
) -> list[int]:
    """Indices of the best-scoring sentences that fit the token budget, in reading order."""
    sizes = embedder.count_tokens(sentences)
    keep: list[int] = []
    used = 0
    for i in np.argsort(-scores):
        if used + sizes[i] - 2 <= budget or not keep:
            keep.append(int(i))
            used += sizes[i] - 2
    return sorted(keep)


def build_messages(question: str, sources: list[Source]) -> list[dict[str, str]]:
    context = "\n\n".join(s.render() for s in sources)
    user = f"Sources:\n\n{context}\n\nQuestion: {question}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def refusal(question: str, hits: list[Hit], backend: str, timings: dict[str, float]) -> Answer:
    return Answer(
        text=REFUSAL,
        grounded=False,
        query=question,
        hits=tuple(hits),
        backend=backend,
        timings=timings,
    )


def says_no_answer(text: str) -> bool:
    return bool(_NO_ANSWER.search(text))


# -- checking citations ------------------------------------------------------------------------
def _numbers(marker: str) -> list[int]:
    """ "1, 3-5" -> [1, 3, 4, 5]"""
    numbers: list[int] = []
    for part in re.split(r"\s*,\s*", marker):
        bounds = [int(x) for x in re.split(r"\s*[-–]\s*", part) if x]
        if len(bounds) == 2 and 0 < bounds[1] - bounds[0] < 20:
            numbers.extend(range(bounds[0], bounds[1] + 1))
        else:
            numbers.extend(bounds)
    return numbers


@dataclass
class _Renumbering:
    valid: set[int]
    order: list[int]
    removed: int = 0

    def __call__(self, match: re.Match[str]) -> str:
        kept = []
        for n in _numbers(match.group(1)):
            if n not in self.valid:
                self.removed += 1
                continue
            if n not in self.order:
                self.order.append(n)
            new = self.order.index(n) + 1
            if new not in kept:
                kept.append(new)
        return " [" + ", ".join(map(str, kept)) + "]" if kept else ""


def check_citations(
    text: str, question: str, sources: list[Source], embedder: Embedder, backend: str
) -> Answer:
    """Keep markers that name a retrieved source, renumbered in order of first use.

    Claims without a marker are attributed to a source only when one of its abstract
    sentences states them closely; otherwise they are flagged as unsupported.
    """
    text = _attribute_uncited(text.strip(), sources, embedder)
    renumber = _Renumbering(valid={s.number for s in sources}, order=[])
    checked = re.sub(r"[ \t]+([.,;:])", r"\1", _MARKER.sub(renumber, text)).strip()
    by_number = {s.number: s for s in sources}
    cited = [by_number[n] for n in renumber.order]
    citations = tuple(
        Citation(i, s.paper, _best_quote(checked, i, s, embedder)) for i, s in enumerate(cited, 1)
    )
    return Answer(
        text=checked,
        grounded=True,
        query=question,
        citations=citations,
        hits=tuple(s.hit for s in sources),
        removed_citations=renumber.removed,
        unsupported_sentences=tuple(_uncited_claims(checked)),
        backend=backend,
    )


def _uncited_claims(text: str) -> list[str]:
    """Statements no marker covers, leaving out headings, lead-ins and short fragments.

    A marker covers its own sentence and the unmarked sentences before it on the same line
    ("X does A. It reaches B [1]."); sentences after a line's last marker are uncovered.
    """
    claims: list[str] = []
    for line in text.splitlines():
        sentences = split_sentences(line.strip(" -*•"))
        marked = [i for i, s in enumerate(sentences) if _MARKER.search(s)]
        tail = sentences[marked[-1] + 1 :] if marked else sentences
        claims.extend(s for s in tail if len(s.split()) >= 6 and not s.rstrip().endswith(":"))
    return claims


def _attribute_uncited(text: str, sources: list[Source], embedder: Embedder) -> str:
    claims = _uncited_claims(text)
    if not claims or not sources:
        return text
    candidates = [(s.number, sent) for s in sources for sent in split_sentences(s.paper.abstract)]
    abstract_vectors = sentence_vectors(embedder, [sent for _, sent in candidates])
    sims = embedder.embed(claims) @ abstract_vectors.T
    for claim, row in zip(claims, sims, strict=True):
        best = int(np.argmax(row))
        if row[best] >= SUPPORT_MIN:
            marked = re.sub(r"([.!?]?)$", rf" [{candidates[best][0]}]\1", claim, count=1)
            text = text.replace(claim, marked, 1)
    return text


def _best_quote(text: str, number: int, source: Source, embedder: Embedder) -> str:
    """The abstract sentence closest to the statements that cite this source."""
    marker = re.compile(rf"\[[^\]]*\b{number}\b[^\]]*\]")
    sentences_of_text = [s for line in text.splitlines() for s in split_sentences(line)]
    statements = [s for s in sentences_of_text if marker.search(s)]
    sentences = split_sentences(source.paper.abstract)
    if not statements or not sentences:
        return sentences[0] if sentences else ""
    quoted = [s for s in sentences if s.rstrip(" .") in statements[0]]
    if quoted:
        return quoted[0]  # the statement repeats the abstract's own words
    statement = embedder.embed_query(_MARKER.sub("", statements[0]))
    return sentences[int(np.argmax(sentence_vectors(embedder, sentences) @ statement))]


# -- the extractive backend ------------------------------------------------------------------
def extractive_reply(scored: list[ScoredHit]) -> str:
    """No LLM: each relevant paper's sentence that best answers the question, cited."""
    per_paper = {1: 3, 2: 2}.get(len(scored), 1)  # say more when fewer papers are relevant
    lines = []
    for number, s in enumerate(scored, start=1):
        top = sorted(np.argsort(-s.similarities)[:per_paper])
        said = " ".join(s.sentences[i] for i in top).rstrip(" .")
        lines.append(f"- {s.hit.paper.title}: {said} [{number}].")
    return "\n".join(lines)


def stream_reply(pieces: Iterator[str]) -> Iterator[str]:
    """Pass the model's text through, dropping an opening blank."""
    started = False
    for piece in pieces:
        if not started:
            piece = piece.lstrip()
            started = bool(piece)
        if piece:
            yield piece
