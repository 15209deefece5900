"""Reranking: a cross-encoder trained here re-reads the fused top papers with the question.

The first stage (BM25 and MiniLM, mixed by the learned fusion) finds candidates fast but
tells a paper apart from a same-topic neighbour only by shared words and one vector each.
The reranker (``rag.crossencoder``, model ``reranker``; ``bench/reranker_data.py`` and
``bench/train_crossencoder.py reranker`` rebuild it) reads the question together with each
of the first ``retrieval.rerank_depth`` papers' title and best chunk, and gives a logit.
The final score of those papers is that logit plus the manifest's ``fusion_weight`` times
the fused score (chosen on tuning queries the model was not trained on); papers below the
depth keep their order after them. ``retrieval.rerank = false`` turns it off.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from functools import lru_cache

import numpy as np

from ..crossencoder import CrossEncoder
from ..types import Hit, Paper

NAME = "reranker"


def passage(paper: Paper, evidence: Sequence[str]) -> str:
    """What the reranker reads of a paper: its title and its best chunk."""
    body = evidence[0] if evidence else paper.abstract
    return f"{paper.title.strip().rstrip('.')}. {body}"


@lru_cache(maxsize=1)
def model() -> CrossEncoder:
    """The reranker, loaded once per process on first use."""
    return CrossEncoder(NAME)


def fusion_weight(encoder: CrossEncoder) -> float:
    return float(encoder.manifest.get("fusion_weight", 0.0))


def rerank(
    query: str, hits: list[Hit], depth: int, encoder: CrossEncoder | None = None
) -> list[Hit]:
    """``hits`` (best first, fused scores) with the first ``depth`` re-scored and re-ordered."""
    if depth <= 1 or len(hits) <= 1:
        return hits
    encoder = encoder or model()
    top, rest = hits[:depth], hits[depth:]
    logits = encoder.logits([(query, passage(h.paper, h.evidence)) for h in top])
    fused = np.array([h.score for h in top], dtype=np.float32)
    scores = combine(logits, fused, fusion_weight(encoder))
    order = np.argsort(-scores, kind="stable")
    return [replace(top[i], score=float(scores[i])) for i in order] + rest


def combine(logits: np.ndarray, fused: np.ndarray, weight: float) -> np.ndarray:
    out: np.ndarray = logits + weight * fused
    return out
