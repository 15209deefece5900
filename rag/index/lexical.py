"""The lexical side: words, their equivalents, and BM25 over the chunks.

Both the chunks and the questions are split by ``tokenize``: lower-cased, stemmed words
without English stopwords. Words that the stemmer keeps apart but a question and an
abstract use for one thing (``EQUIVALENT``: defend and defense) count as one. The BM25
scores are kept as a sparse matrix by word (``LexicalIndex``), so a process that only
searches needs numpy, not bm25s.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

import numpy as np

_TOKEN = re.compile(r"(?u)\b\w\w+\b")


# Lucene's English stopwords, bm25s's STOPWORDS_EN: named here so that searching never
# imports bm25s (0.7 s with numba and scipy); only building the BM25 index does.
STOPWORDS = frozenset(
    "a an and are as at be but by for if in into is it no not of on or such that the their "
    "then there these they this to was will with".split()
)


def tokenize(text: str) -> list[str]:
    """Lower-cased, stemmed word tokens without English stopwords (both sides use this)."""
    stem = _stemmer()
    words = [w for w in _TOKEN.findall(text.lower()) if w not in STOPWORDS]
    return stem.stemWords(words) if stem else words


_SPELLINGS = ((re.compile(r"(?<=\w{2})our$"), "or"), (re.compile(r"(?<=[a-z])ae(?=[a-z])"), "e"),
              (re.compile(r"^oe(?=s)"), "e"))  # fmt: skip


def fold(stem: str) -> str:
    """A stem in American spelling ("tumour" -> "tumor", "haemoglobin" -> "hemoglobin",
    "oestrogen" -> "estrogen"): the checks compare a question's and an abstract's words
    folded, so that a British abstract says what an American question asks, and back."""
    for pattern, plain in _SPELLINGS:
        stem = pattern.sub(plain, stem)
    return stem


# Forms a question and an abstract use for one thing that stemming keeps apart: a verb and
# its noun, British and American spellings, and phrases of the field that name one thing.
# A phrase's forms have as many words and differ word by word.
EQUIVALENT = (
    "defend|defense|defence", "explain|explanation", "reduce|reduction",
    "describe|description", "decide|decision", "solve|solution", "analyze|analyse|analysis",
    "prove|proof", "compose|composition", "perceive|perception", "assume|assumption",
    "generalize|generalise", "optimize|optimise", "regularize|regularise",
    "summarize|summarise|summary", "behavior|behaviour", "neighbor|neighbour",
    "color|colour", "private|privacy", "represent|representation", "stable|stability",
    "sparse|sparsity", "accurate|accuracy", "uncertain|uncertainty",
    "adversarial images|adversarial examples|adversarial inputs",
)  # fmt: skip


def query_terms(text: str) -> list[tuple[str, ...]]:
    """The question's stemmed words in order, each with its equivalent stems after it."""
    words = tokenize(text)
    same, phrases = _equivalents()
    terms = [[w, *sorted(same.get(w, ()))] for w in words]
    for forms in phrases:
        for form in forms:
            for i in range(len(words) - len(form) + 1):
                if tuple(words[i : i + len(form)]) != form:
                    continue
                for other in forms:
                    for j, (mine, theirs) in enumerate(zip(form, other, strict=True)):
                        if theirs != mine and theirs not in terms[i + j]:
                            terms[i + j].append(theirs)
    return [tuple(t) for t in terms]


@cache
def _equivalents() -> tuple[dict[str, set[str]], list[list[tuple[str, ...]]]]:
    """EQUIVALENT stemmed: each word's equivalent stems, and the phrase families."""
    same: dict[str, set[str]] = {}
    phrases = []
    for family in EQUIVALENT:
        forms = [tuple(tokenize(form)) for form in family.split("|")]
        if all(len(f) == 1 for f in forms):
            for (form,) in forms:
                same.setdefault(form, set()).update(f for (f,) in forms if f != form)
        else:
            phrases.append(forms)
    return same, phrases


_STEMMER: Any = None


def _stemmer() -> Any:
    global _STEMMER
    if _STEMMER is None:
        import Stemmer

        _STEMMER = Stemmer.Stemmer("english")
    return _STEMMER


@dataclass(frozen=True)
class LexicalIndex:
    """BM25 over the chunks: every word's score in every chunk, as bm25s computes it, kept as
    a sparse matrix by word. A query's scores are the sums of its words' columns, so a process
    that only searches needs numpy, not bm25s."""

    vocab: dict[str, int]
    data: np.ndarray  # the scores, word by word
    indices: np.ndarray  # the chunk of each score
    indptr: np.ndarray  # where each word's scores start in ``data``
    num_chunks: int

    @classmethod
    def build(cls, chunk_words: list[list[str]]) -> LexicalIndex:
        import bm25s

        bm25 = bm25s.BM25()  # Lucene's BM25: no score for words a chunk lacks
        bm25.index(chunk_words, show_progress=False)
        m = bm25.scores
        return cls(dict(bm25.vocab_dict), m["data"], m["indices"], m["indptr"], m["num_docs"])

    def scores(self, words: list[str] | list[tuple[str, ...]]) -> np.ndarray | None:
        """Every chunk's BM25 score for the words; None when none of them is indexed. A word
        given as a tuple of equivalent forms scores each chunk by its best form.

        ``bm25s.get_scores`` without its ``np.add.at`` (~20 ms for a long question over 30k
        chunks): a word's column names each chunk once, so an indexed ``+=`` adds the same
        float32 values in the same order, and the scores are identical.
        """
        terms = [[self.vocab[f] for f in _forms(w) if f in self.vocab] for w in words]
        terms = [t for t in terms if t]
        if not terms or not self.num_chunks:
            return None
        scores = np.zeros(self.num_chunks, dtype=self.data.dtype)
        for ids in terms:
            if len(ids) == 1:
                chunks, values = self._column(ids[0])
                scores[chunks] += values
                continue
            best = np.zeros_like(scores)
            for word in ids:
                chunks, values = self._column(word)
                best[chunks] = np.maximum(best[chunks], values)
            scores += best
        return scores

    def _column(self, word: int) -> tuple[np.ndarray, np.ndarray]:
        start, end = self.indptr[word], self.indptr[word + 1]
        return self.indices[start:end], self.data[start:end]

    def idf(self, word: int) -> float:
        """BM25's inverse document frequency of a word id, over the chunks."""
        df = int(self.indptr[word + 1] - self.indptr[word])
        return float(np.log(1 + (self.num_chunks - df + 0.5) / (df + 0.5)))

    def save(self, folder: Path) -> None:
        for name in ("data", "indices", "indptr"):
            np.save(folder / f"bm25_{name}.npy", getattr(self, name))

    @classmethod
    def load(cls, folder: Path, vocab: dict[str, int], num_chunks: int) -> LexicalIndex:
        arrays = {  # plain arrays over the mapped files: np.memmap slices cost more
            n: np.asarray(np.load(folder / f"bm25_{n}.npy", mmap_mode="r"))
            for n in ("data", "indices", "indptr")
        }
        return cls(vocab, num_chunks=num_chunks, **arrays)


def _forms(word: str | tuple[str, ...]) -> tuple[str, ...]:
    return (word,) if isinstance(word, str) else word


def top_chunks(scores: np.ndarray | None, n: int) -> list[tuple[int, float]]:
    """The n best-scoring chunks as (chunk index, score), best first; none scoring 0."""
    if scores is None:
        return []
    n = min(n, len(scores))
    top = np.argpartition(-scores, n - 1)[:n]
    top = top[np.argsort(-scores[top])]
    return [(int(i), float(scores[i])) for i in top if scores[i] > 0]
