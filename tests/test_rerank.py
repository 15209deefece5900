"""The reranker (rag/data/models/reranker): it reads a question with each top paper and puts
the paper that answers it first, it is checked before use, and it can be turned off.

The papers below are made up for these tests: none is in an evaluation corpus or bundled."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rag import rerank
from rag.crossencoder import MODELS, CrossEncoder
from rag.embedder import Embedder
from rag.errors import ConfigError
from rag.types import Paper

from .conftest import make_assistant

QUESTION = "Which paper reduces the memory a protein contact predictor needs at inference?"
ANSWERS = Paper(
    "made-up-1",
    "Quillnet: Sparse Routing for Contact Maps",
    "We introduce Quillnet, a transformer whose attention heads are routed sparsely by a "
    "learned gate. Sparse routing cuts the memory used at inference by a factor of three "
    "while keeping accuracy on long-range contacts.",
)
NEIGHBOUR = Paper(  # the same topic, more of the question's words, not what it asks
    "made-up-2",
    "Protein Contact Prediction with Evolutionary Couplings",
    "Protein contact prediction is a central problem: a contact predictor tells which "
    "residues of a protein touch. We present a protein contact predictor built on "
    "evolutionary couplings and report its precision on protein families.",
)
OTHERS = [
    Paper(f"made-up-{i}", title, abstract)
    for i, (title, abstract) in enumerate(
        [
            ("Graph Kernels for Molecules", "We compare graph kernels on molecule datasets."),
            ("Fast Image Segmentation", "A segmentation network that runs in real time."),
            ("Bandits with Delays", "We bound the regret of bandits whose rewards arrive late."),
        ],
        start=3,
    )
]


def _pair(paper: Paper) -> tuple[str, str]:
    return QUESTION, rerank.passage(paper, (paper.abstract,))


def test_the_paper_that_answers_reads_above_a_neighbour_with_more_shared_words() -> None:
    logits = rerank.model().logits([_pair(ANSWERS), _pair(NEIGHBOUR)])
    assert logits[0] > logits[1]


def test_readings_are_the_same_on_every_load() -> None:
    pairs = [_pair(p) for p in (ANSWERS, NEIGHBOUR, *OTHERS)]
    first = rerank.model().logits(pairs)
    again = CrossEncoder(rerank.NAME).logits(pairs)  # a fresh model, nothing cached
    assert np.allclose(first, again, atol=1e-5)


@pytest.fixture(scope="module")
def index(tmp_path_factory: pytest.TempPathFactory, embedder: Embedder) -> Path:
    folder = tmp_path_factory.mktemp("rerank-index")
    papers = folder / "papers.jsonl"
    rows = [
        {"id": p.paper_id, "title": p.title, "abstract": p.abstract}
        for p in (ANSWERS, NEIGHBOUR, *OTHERS)
    ]
    papers.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    make_assistant(folder / "index", embedder).ingest([papers])
    return folder / "index"


def _search(index: Path, embedder: Embedder, on: bool) -> list[str]:
    assistant = make_assistant(index, embedder)
    assistant.settings.retrieval.rerank = on
    return [h.paper.paper_id for h in assistant.search(QUESTION, k=5, parse=False)]


def test_search_puts_the_answering_paper_first_and_off_restores_the_fused_order(
    index: Path, embedder: Embedder
) -> None:
    reranked = _search(index, embedder, on=True)
    fused = _search(index, embedder, on=False)
    assert reranked[0] == ANSWERS.paper_id
    assert sorted(reranked) == sorted(fused)
    assistant = make_assistant(index, embedder)
    assistant.settings.retrieval.rerank = False
    stage = assistant.retriever.first_stage(QUESTION, None, "hybrid", None)
    from rag.fusion import by_score

    expected = by_score(stage, 5, QUESTION, assistant.settings.retrieval)
    assert fused == [h.paper.paper_id for h in expected]


def test_the_reranker_loads_and_scores_without_torch() -> None:
    code = (
        "import sys; from rag import rerank; "
        f"rerank.model().logits([({QUESTION!r}, 'A title. An abstract.')]); "
        "print('torch' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_an_altered_weight_file_is_one_line_naming_the_command_that_restores_it(
    tmp_path: Path,
) -> None:
    folder = tmp_path / "reranker"
    shutil.copytree(MODELS / "reranker", folder)
    with (folder / "model.onnx").open("ab") as f:
        f.write(b"\0")
    with pytest.raises(ConfigError) as err:
        CrossEncoder("reranker", folder).logits([("a question", "a passage")])
    message = str(err.value)
    assert "\n" not in message
    assert "bench/train_crossencoder.py reranker" in message
