"""Fusion: the two sides' candidates to one ranked list of hits, one per paper.

The default is learned (``retrieval.fusion = "learned"``, the model in ``rag.index.ranking``):
every candidate either side finds is described by both scores and ranks and by how it
matches the question's words, and scored by a small model trained on training queries.
``"score"`` mixes the normalised scores by a fixed weight; ``"rrf"`` fuses the ranks.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..index import ranking
from ..index.snapshot import Corpus
from ..settings import RetrievalSettings
from ..types import Hit


@dataclass(frozen=True)
class FirstStage:
    """Each side's best chunks (``settings.candidates`` of them) as (chunk row, score), with
    every chunk's BM25 score and the query's vector where that side ran."""

    corpus: Corpus
    lexical: list[tuple[int, float]]
    dense: list[tuple[int, float]]
    bm25: np.ndarray | None
    vector: np.ndarray | None

    @property
    def chunks(self) -> list[tuple[int, float]]:
        return [*self.dense, *self.lexical]

    def evidence(self, pid: str) -> tuple[str, ...]:
        """The paper's best two chunks: those the sides found, else its first ones."""
        corpus = self.corpus
        found = [c for c, _ in self.chunks if corpus.chunk_papers[c] == pid]
        chunks = list(dict.fromkeys(found)) or corpus.paper_chunks[pid]
        return tuple(corpus.chunk_texts[i] for i in chunks[:2])


@dataclass(frozen=True)
class Candidates:
    """The papers either side found, with their best chunk's BM25 score and cosine, and
    their ``ranking.FEATURES`` (one row per paper)."""

    paper_ids: list[str]
    lexical: np.ndarray
    dense: np.ndarray
    features: np.ndarray


def fuse_scores(lexical: np.ndarray, dense: np.ndarray, lexical_weight: float) -> np.ndarray:
    """Score fusion: BM25 over its best candidate, cosine min-max over the candidates, mixed.

    Measured against other normalisations (both sides min-max, z-scores, a theoretical
    minimum for the cosine) and a per-question weight on four query sets; none beat this on
    all of them (``bench/fusion.py`` sweeps the weight).
    """
    lex = lexical / lexical.max() if lexical.max() > 0 else lexical * 0
    spread = dense.max() - dense.min()
    den = (dense - dense.min()) / spread if spread > 0 else dense * 0 + 1
    fused: np.ndarray = lexical_weight * lex + (1 - lexical_weight) * den
    return fused


def by_score(stage: FirstStage, k: int, query: str, settings: RetrievalSettings) -> list[Hit]:
    """The k best papers by both scores of every candidate, mixed by the learned model
    (``fusion = "learned"``) or normalised and mixed by a fixed weight (``"score"``).

    Rank fusion scores a paper that only one side found as if the other side ranked it
    last, so a paper BM25 puts first by a wide margin loses to papers both sides rank
    fifth. Here each side scores every candidate either side found (the missing cosine
    similarities come from the stored chunk vectors), so a confident side counts.
    """
    learned = settings.fusion == "learned"
    found = candidates(stage, query if learned else None)
    if not found.paper_ids:
        return []
    papers, lex, den = found.paper_ids, found.lexical, found.dense
    if learned:
        fused = ranking.bundled_model().score(found.features)
    else:
        fused = fuse_scores(lex, den, settings.lexical_weight)
    order = np.argsort(-fused)[:k]
    lex_rank = {p: r for r, p in enumerate(np.array(papers)[np.argsort(-lex)], 1)}
    den_rank = {p: r for r, p in enumerate(np.array(papers)[np.argsort(-den)], 1)}
    return [
        Hit(
            paper=stage.corpus.papers[papers[i]],
            score=float(fused[i]),
            evidence=stage.evidence(papers[i]),
            lexical_rank=lex_rank[papers[i]] if lex[i] > 0 else None,
            dense_rank=den_rank[papers[i]],
            dense_similarity=float(den[i]),
        )
        for i in order
    ]


def candidates(stage: FirstStage, query: str | None) -> Candidates:
    """The candidate papers' scores, and their features when ``query`` is given."""
    corpus = stage.corpus
    found = [*stage.lexical, *stage.dense]
    papers = list(dict.fromkeys(corpus.chunk_papers[c] for c, _ in found))
    cosine = _paper_cosines(stage, papers) if papers else {}
    lexical = np.array([_best(stage.bm25, corpus.paper_chunks[p]) for p in papers])
    dense = np.array([cosine[p] for p in papers])
    features = np.zeros((len(papers), len(ranking.FEATURES)))
    if query is not None and papers:
        chunks = [corpus.paper_chunks[p] for p in papers]
        words = corpus.words(np.concatenate(chunks))
        paper_of_chunk = np.repeat(np.arange(len(papers)), [len(c) for c in chunks])
        terms = corpus.query_terms(query)
        features = ranking.features(words, paper_of_chunk, terms, lexical, dense)
    return Candidates(papers, lexical, dense, features)


def rrf(stage: FirstStage, k: int, rrf_k: int) -> list[Hit]:
    """The k best papers by reciprocal-rank fusion (``retrieval.fusion = "rrf"``), or by a
    single side's order when only one side ran."""
    scores: dict[str, float] = {}
    evidence: dict[str, list[int]] = {}
    ranks: dict[str, dict[str, int]] = {}
    best_sim: dict[str, float] = {}
    corpus = stage.corpus
    for side, ranked in (("lexical", stage.lexical), ("dense", stage.dense)):
        rank = 0
        for chunk, score in ranked:
            pid = corpus.chunk_papers[chunk]
            evidence.setdefault(pid, [])
            if chunk not in evidence[pid]:
                evidence[pid].append(chunk)
            if side == "dense":
                best_sim[pid] = max(best_sim.get(pid, -1.0), score)
            if side in ranks.setdefault(pid, {}):
                continue  # a paper counts once per side, at its best chunk
            rank += 1
            ranks[pid][side] = rank
            scores[pid] = scores.get(pid, 0.0) + 1.0 / (rrf_k + rank)
    best = sorted(scores, key=lambda pid: -scores[pid])[:k]
    return [
        Hit(
            paper=corpus.papers[pid],
            score=scores[pid],
            evidence=tuple(corpus.chunk_texts[i] for i in evidence[pid][:2]),
            lexical_rank=ranks[pid].get("lexical"),
            dense_rank=ranks[pid].get("dense"),
            dense_similarity=best_sim.get(pid),
        )
        for pid in best
    ]


def _paper_cosines(stage: FirstStage, papers: list[str]) -> dict[str, float]:
    """Best chunk cosine per paper: from the dense results, else from the snapshot's vectors
    of the paper's chunks."""
    corpus = stage.corpus
    best: dict[str, float] = {}
    for chunk, sim in stage.dense:
        pid = corpus.chunk_papers[chunk]
        best[pid] = max(best.get(pid, -1.0), sim)
    missing = [c for p in papers if p not in best for c in corpus.paper_chunks[p]]
    if missing and stage.vector is not None:
        for chunk, sim in zip(missing, corpus.vectors[missing] @ stage.vector, strict=True):
            pid = corpus.chunk_papers[chunk]
            best[pid] = max(best.get(pid, -1.0), float(sim))
    return {p: best.get(p, 0.0) for p in papers}


def _best(scores: np.ndarray | None, chunks: list[int]) -> float:
    return float(scores[chunks].max()) if scores is not None else 0.0
