"""Papers to chunks: sentence-bounded pieces that fit the embedder's window.

The title is searched with every chunk (``searchable_text``): embedded with it, so the
window holds both, and indexed with it for BM25.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from ..types import Paper

# A sentence ends at . ! or ? followed by space and something that starts a sentence;
# common abbreviations are not ends.
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z0-9($\\\"'])")
_ABBREVIATIONS = ("e.g.", "i.e.", "et al.", "vs.", "cf.", "Fig.", "Eq.", "etc.", "resp.", "approx.")


@dataclass(frozen=True)
class Chunk:
    paper_id: str
    number: int
    text: str  # the abstract's sentences in this chunk
    embed_text: str  # what is embedded: title + text


def searchable_text(title: str, text: str) -> str:
    """A chunk as both sides search it: its paper's title, then its text."""
    return f"{title}. {text}"


def split_sentences(text: str) -> list[str]:
    """Split an abstract into sentences, keeping abbreviations like "e.g." inside."""
    pieces = _SENTENCE_END.split(text.strip())
    sentences: list[str] = []
    for piece in pieces:
        if sentences and sentences[-1].endswith(_ABBREVIATIONS):
            sentences[-1] = f"{sentences[-1]} {piece}"
        else:
            sentences.append(piece)
    return [s for s in sentences if s]


def chunk_paper(
    paper: Paper, max_tokens: int, count: Callable[[list[str]], list[int]]
) -> list[Chunk]:
    """Pack whole sentences into chunks of at most ``max_tokens`` tokens with the title."""
    prefix = searchable_text(paper.title, "")
    # WordPiece splits on whitespace first, so token counts of joined sentences add up.
    budget = max_tokens - count([prefix])[0]
    sentences = _fit_sentences(split_sentences(paper.abstract), budget, count)
    sizes = count(sentences)
    groups: list[list[str]] = [[]]
    used = 0
    for sentence, size in zip(sentences, sizes, strict=True):
        size -= 2  # [CLS] and [SEP] are already counted with the title
        if groups[-1] and used + size > budget:
            groups.append([])
            used = 0
        groups[-1].append(sentence)
        used += size
    return [
        Chunk(paper.paper_id, n, " ".join(g), searchable_text(paper.title, " ".join(g)))
        for n, g in enumerate(groups)
    ]


def _fit_sentences(
    sentences: list[str], budget: int, count: Callable[[list[str]], list[int]]
) -> list[str]:
    """Break any sentence longer than the budget into word runs that fit."""
    fitted: list[str] = []
    for sentence, size in zip(sentences, count(sentences), strict=True):
        if size - 2 <= budget:
            fitted.append(sentence)
            continue
        fitted.extend(_split_words(sentence.split(), budget, count))
    return fitted


def _split_words(
    words: list[str], budget: int, count: Callable[[list[str]], list[int]]
) -> list[str]:
    """Halve a run of words until each half fits the budget."""
    text = " ".join(words)
    if len(words) <= 1 or count([text])[0] - 2 <= budget:
        return [text]
    half = len(words) // 2
    return _split_words(words[:half], budget, count) + _split_words(words[half:], budget, count)
