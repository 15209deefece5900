"""Candidates to order: what each candidate paper shares with the question, and the learned
fusion that ranks on it.

Beyond each side's score (best chunk's BM25, best chunk's cosine, and their ranks), a
candidate is described by how it matches the question's words: the share of the question's
weight (IDF) it holds, the share of its rarest words, its question word pairs found next to
each other (in order) or near each other (within ``WINDOW`` words), the share of the
question held by its title (for a paper listed without one, the derived title that names its
method), and how far its coverage falls short of the best candidate's. A linear model over
these, trained by ``bench/train_fusion.py`` on training queries only, scores each
candidate; its coefficients ship as ``rag/data/fusion.json`` and are applied here with
numpy, so searching imports nothing more.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from functools import cache
from pathlib import Path

import numpy as np

MODEL = Path(__file__).parent.parent / "data" / "fusion.json"
WINDOW = 8  # words between two question words for them to count as near each other
FEATURES = (
    "bm25",  # best chunk's BM25 over the best candidate's
    "cosine",  # best chunk's cosine similarity
    "cosine_spread",  # the same, min-max over the candidates
    "bm25_rank",  # log2 of the rank among the candidates (0: first)
    "cosine_rank",
    "coverage",  # IDF share of the question's terms the paper holds
    "rare_coverage",  # share of the question's rarer half of terms it holds
    "pairs",  # IDF share of adjacent question term pairs found adjacent, in order
    "near_pairs",  # the same, within WINDOW words in either order
    "title",  # IDF share of the question's terms in the title
    "coverage_gap",  # coverage minus the best candidate's (0 for the best)
    "near_pairs_gap",  # near_pairs minus the best candidate's
)


@dataclass(frozen=True)
class QueryTerms:
    """A question's terms as vocabulary ids: each term with the ids that count as it (its
    stem and the stems of its equivalent words), its IDF, and the order of the terms in the
    question (positions into ``ids``) for word pairs."""

    ids: tuple[np.ndarray, ...]
    idf: np.ndarray
    order: tuple[int, ...]

    @property
    def pairs(self) -> list[tuple[int, int]]:
        seq = self.order
        return [(a, b) for a, b in zip(seq, seq[1:], strict=False) if a != b]


@dataclass(frozen=True)
class FusionModel:
    """A linear score over ``FEATURES``, standardised as in training, through a sigmoid."""

    features: tuple[str, ...]
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray
    bias: float

    def score(self, x: np.ndarray) -> np.ndarray:
        """Each candidate's probability of being a paper the question asks for."""
        z = ((x - self.mean) / self.scale) @ self.weights + self.bias
        scores: np.ndarray = 1.0 / (1.0 + np.exp(-z))
        return scores

    @classmethod
    def from_json(cls, data: dict) -> FusionModel:
        if tuple(data["features"]) != FEATURES:
            raise ValueError(f"the fusion model's features are {data['features']}, not {FEATURES}")
        arrays = {k: np.asarray(data[k], dtype=np.float64) for k in ("mean", "scale", "weights")}
        return cls(FEATURES, bias=float(data["bias"]), **arrays)

    def to_json(self) -> dict:
        return {
            "features": list(self.features),
            "mean": self.mean.tolist(),
            "scale": self.scale.tolist(),
            "weights": self.weights.tolist(),
            "bias": self.bias,
        }


@cache
def bundled_model(path: Path = MODEL) -> FusionModel:
    """The fusion model that ships with the package."""
    return FusionModel.from_json(json.loads(path.read_text(encoding="utf-8")))


@dataclass(frozen=True)
class Words:
    """Some chunks' word ids laid end to end, each word tagged with its chunk (a position in
    the chunks asked for) and whether it is the title's."""

    ids: np.ndarray
    chunk: np.ndarray
    in_title: np.ndarray

    @classmethod
    def of(
        cls, tokens: np.ndarray, starts: np.ndarray, title_lengths: np.ndarray, chunks: np.ndarray
    ) -> Words:
        """``tokens``: every chunk's word ids in a row; ``starts``: where each chunk's start
        (then the end); ``title_lengths``: how many of a chunk's first words are the title."""
        first, lengths = starts[chunks], starts[chunks + 1] - starts[chunks]
        chunk = np.repeat(np.arange(len(chunks)), lengths)
        offset = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        return cls(tokens[first[chunk] + offset], chunk, offset < title_lengths[chunks][chunk])


def features(
    words: Words,
    paper_of_chunk: np.ndarray,
    terms: QueryTerms,
    lexical: np.ndarray,
    dense: np.ndarray,
) -> np.ndarray:
    """One row of ``FEATURES`` per candidate paper.

    ``words``: the candidates' chunks' words; ``paper_of_chunk``: each of those chunks'
    candidate; ``lexical`` and ``dense``: each candidate's best chunk BM25 score and cosine.
    """
    n = len(lexical)
    x = np.zeros((n, len(FEATURES)), dtype=np.float64)
    x[:, 0] = lexical / lexical.max() if lexical.max() > 0 else 0.0
    x[:, 1] = dense
    spread = dense.max() - dense.min()
    x[:, 2] = (dense - dense.min()) / spread if spread > 0 else 1.0
    x[:, 3] = np.log2(_ranks(lexical))
    x[:, 4] = np.log2(_ranks(dense))
    if terms.ids and n:
        x[:, 5:10] = _term_features(words, paper_of_chunk[words.chunk], n, terms)
        x[:, 10] = x[:, 5] - x[:, 5].max()
        x[:, 11] = x[:, 8] - x[:, 8].max()
    return x


def _ranks(scores: np.ndarray) -> np.ndarray:
    """1 + how many candidates score higher: ties share a rank (papers one side did not
    find at all share the last)."""
    ranks: np.ndarray = len(scores) - np.searchsorted(np.sort(scores), scores, side="right") + 1
    return ranks


def _term_features(words: Words, paper: np.ndarray, n: int, terms: QueryTerms) -> np.ndarray:
    """coverage, rare_coverage, pairs, near_pairs, title for every paper at once."""
    ids, chunk = words.ids, words.chunk
    matches = [ids == t[0] if len(t) == 1 else np.isin(ids, t) for t in terms.ids]
    holds = np.zeros((n, len(terms.ids)), dtype=bool)
    in_title = np.zeros((n, len(terms.ids)), dtype=bool)
    for t, found in enumerate(matches):
        holds[paper[found], t] = True
        in_title[paper[found & words.in_title], t] = True
    idf = terms.idf
    rare = idf >= np.median(idf)
    out = np.zeros((n, 5))
    out[:, 0] = holds @ idf / idf.sum()
    out[:, 1] = holds[:, rare].mean(axis=1)
    pairs = terms.pairs
    if pairs:
        weight = np.array([idf[a] + idf[b] for a, b in pairs])
        adjacent = np.zeros((n, len(pairs)), dtype=bool)
        near = np.zeros((n, len(pairs)), dtype=bool)
        for j, (a, b) in enumerate(pairs):
            together = matches[a][:-1] & matches[b][1:] & (chunk[:-1] == chunk[1:])
            adjacent[paper[:-1][together], j] = True
            near[_near(matches[a], matches[b], chunk, paper), j] = True
        out[:, 2] = adjacent @ weight / weight.sum()
        out[:, 3] = near @ weight / weight.sum()
    out[:, 4] = in_title @ idf / idf.sum()
    return out


def _near(a: np.ndarray, b: np.ndarray, chunk: np.ndarray, paper: np.ndarray) -> np.ndarray:
    """The papers where a word of ``a`` has a word of ``b`` within WINDOW words, same chunk."""
    pos_a, pos_b = np.flatnonzero(a), np.flatnonzero(b)
    if not len(pos_a) or not len(pos_b):
        return np.zeros(0, dtype=np.int64)
    j = np.searchsorted(pos_b, pos_a - WINDOW)
    ok = j < len(pos_b)
    pos_a, first_b = pos_a[ok], pos_b[j[ok]]  # the first b at or after WINDOW words before
    close = (first_b <= pos_a + WINDOW) & (first_b != pos_a) & (chunk[first_b] == chunk[pos_a])
    found: np.ndarray = paper[pos_a[close]]
    return found
