"""Does this abstract state that? One learned judgement for statements, questions and lists.

A statement an answer makes ("CSR improves robust accuracy by 5% [1]"), a question asked of a
paper ("On which datasets does it reach the state of the art?") and a list's topic ("Which
papers quantize network weights?") are all read against an abstract the same way: a
cross-encoder trained here (``rag.crossencoder``, model ``verifier``) scores the text against
each window of the abstract, its title and two consecutive sentences, and the best window
decides. Thresholds are calibrated on the dev corpora's labelled statements and questions
(``bench/calibrate_verifier.py``) and kept in the model's manifest:

- ``support``: a statement stands on a window of its cited abstract;
- ``answers``: a window holds what a question asks (else "the abstract does not say");
- ``member``: a paper does what a list or "which paper" question asks.

Only the fourth use is on by default (``retrieval.read_sentences``): each sentence of a paper
an answer reads is read against the question (``per_sentence``), and those that read as its
answer are chosen before those merely closest to it in meaning (``answering.read``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..crossencoder import CrossEncoder

NAME = "verifier"


def windows(sentences: Sequence[str]) -> list[str]:
    """Two consecutive sentences at a time, every start but the last: each sentence is read
    with the one after it (the last with the one before)."""
    sentences = [s.strip() for s in sentences if s.strip()]
    if len(sentences) <= 1:
        return list(sentences)
    return [f"{a} {b}" for a, b in zip(sentences, sentences[1:], strict=False)]


def passage(title: str, window: str) -> str:
    return f"{title.strip().rstrip('.')}. {window}"


@dataclass(frozen=True)
class Reading:
    """How well an abstract holds a text: its best window, and that window's logit."""

    logit: float
    window: int
    text: str


class Verifier:
    """The judgement, loaded once per process (``rag.crossencoder``)."""

    def __init__(self, model: CrossEncoder | None = None) -> None:
        self.model = model or CrossEncoder(NAME)

    def threshold(self, use: str) -> float:
        return self.model.thresholds.get(use, 0.0)

    def read(self, text: str, title: str, sentences: Sequence[str]) -> Reading:
        """The window of the abstract that best holds ``text``."""
        return self.read_many([text], title, sentences)[0]

    def read_many(
        self, texts: Sequence[str], title: str, sentences: Sequence[str]
    ) -> list[Reading]:
        parts = windows(sentences) or [title]
        pairs = [(t, passage(title, w)) for t in texts for w in parts]
        logits = self.model.logits(pairs).reshape(len(texts), len(parts))
        best = logits.argmax(axis=1)
        return [Reading(float(logits[i, j]), int(j), parts[int(j)]) for i, j in enumerate(best)]

    def per_sentence(self, text: str, title: str, sentences: Sequence[str]) -> np.ndarray:
        """Each sentence's reading: the logit of the better of the two windows it is in."""
        parts = windows(sentences)
        if len(sentences) < 2 or len(parts) != len(sentences) - 1:
            return np.zeros(len(sentences), dtype=np.float32)
        logits = self.model.logits([(text, passage(title, w)) for w in parts])
        return np.maximum(np.append(logits, -np.inf), np.insert(logits, 0, -np.inf))

    def holds(self, text: str, title: str, sentences: Sequence[str], use: str) -> bool:
        return self.read(text, title, sentences).logit >= self.threshold(use)

    def scores(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        return self.model.logits(pairs)
