"""Reranking (``retrieval.rerank``): the fused top papers re-scored by a pair scorer and
re-ordered, the rest kept after them; off, the fused order stands; on without a trained
model, one line naming the command that trains it.

The scorer here is scripted (it implements ``CrossEncoder``'s ``logits`` and ``manifest``):
no reranker weights ship, since the one trained so far does not beat the learned fusion
(docs/evaluation.md#reranker). The papers are made up for these tests."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, cast

import numpy as np
import pytest

from rag.crossencoder import CrossEncoder
from rag.errors import ConfigError
from rag.index.embedder import Embedder
from rag.retrieve import rerank
from rag.types import Hit, Paper

from .conftest import make_assistant

QUESTION = "Which paper reduces the memory a protein contact predictor needs at inference?"
ANSWERS = Paper(
    "made-up-1",
    "Quillnet: Sparse Routing for Contact Maps",
    "We introduce Quillnet, a transformer whose attention heads are routed sparsely by a "
    "learned gate. Sparse routing cuts the memory used at inference by a factor of three.",
)
NEIGHBOUR = Paper(
    "made-up-2",
    "Protein Contact Prediction with Evolutionary Couplings",
    "Protein contact prediction is a central problem: a contact predictor tells which "
    "residues of a protein touch. We present a protein contact predictor built on "
    "evolutionary couplings.",
)
OTHER = Paper("made-up-3", "Bandits with Delays", "We bound the regret of delayed bandits.")


class Scripted:
    """A pair scorer that reads a passage as relevant when it holds ``word``."""

    def __init__(self, word: str, weight: float = 0.0) -> None:
        self.word = word
        self.manifest: dict[str, Any] = {"fusion_weight": weight}
        self.read: list[tuple[str, str]] = []

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        self.read += pairs
        return np.array([5.0 if self.word in p else -5.0 for _, p in pairs], dtype=np.float32)


def _hits(*papers: Paper) -> list[Hit]:
    return [Hit(p, score=1.0 - i / 10, evidence=(p.abstract,)) for i, p in enumerate(papers)]


def _scorer(word: str, weight: float = 0.0) -> CrossEncoder:
    return cast(CrossEncoder, Scripted(word, weight))


def _order(hits: list[Hit]) -> list[str]:
    return [h.paper.paper_id for h in hits]


def test_the_top_papers_are_reordered_by_the_scorer_and_the_rest_kept_after_them() -> None:
    hits = _hits(NEIGHBOUR, OTHER, ANSWERS)
    deep = rerank.rerank(QUESTION, hits, depth=3, encoder=_scorer("Quillnet"))
    assert _order(deep) == ["made-up-1", "made-up-2", "made-up-3"]
    shallow = rerank.rerank(QUESTION, hits, depth=2, encoder=_scorer("Quillnet"))
    assert _order(shallow) == ["made-up-2", "made-up-3", "made-up-1"]


def test_the_scorer_reads_the_title_and_the_best_chunk() -> None:
    scorer = Scripted("Quillnet")
    rerank.rerank(QUESTION, _hits(ANSWERS, OTHER), depth=2, encoder=cast(CrossEncoder, scorer))
    assert scorer.read[0] == (QUESTION, f"{ANSWERS.title}. {ANSWERS.abstract}")


def test_the_fused_score_counts_by_the_manifest_weight() -> None:
    hits = _hits(NEIGHBOUR, ANSWERS)  # fused: the neighbour first
    assert _order(rerank.rerank(QUESTION, hits, 2, _scorer("Quillnet"))) == [
        "made-up-1",
        "made-up-2",
    ]
    heavy = _scorer("Quillnet", weight=1000.0)  # the fused score outweighs the logits
    assert _order(rerank.rerank(QUESTION, hits, 2, heavy)) == ["made-up-2", "made-up-1"]


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    folder = tmp_path_factory.mktemp("rerank-index")
    papers = folder / "papers.jsonl"
    rows = [
        {"id": p.paper_id, "title": p.title, "abstract": p.abstract}
        for p in (ANSWERS, NEIGHBOUR, OTHER)
    ]
    papers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    make_assistant(folder / "index", embedder).ingest([papers])
    return folder / "index"


def test_search_with_the_reranker_on_puts_its_pick_first_and_off_keeps_the_fused_order(
    index: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    assistant = make_assistant(index, embedder)
    fused = [h.paper.paper_id for h in assistant.search(QUESTION, k=3, parse=False)]
    monkeypatch.setattr(rerank, "model", lambda: Scripted("Bandits"))
    assistant.settings.retrieval.rerank = True
    reranked = [h.paper.paper_id for h in assistant.search(QUESTION, k=3, parse=False)]
    assert reranked[0] == OTHER.paper_id != fused[0]
    assert sorted(reranked) == sorted(fused)
    assistant.settings.retrieval.rerank = False
    assert [h.paper.paper_id for h in assistant.search(QUESTION, k=3, parse=False)] == fused


def test_turned_on_without_a_trained_model_is_one_line_naming_the_command(
    tmp_path: Path,
) -> None:
    with pytest.raises(ConfigError) as err:
        CrossEncoder(rerank.NAME, tmp_path / "reranker").logits([("a question", "a passage")])
    message = str(err.value)
    assert "\n" not in message
    assert "bench/train_crossencoder.py reranker" in message
