"""Every stored chunk is searchable: dense search is exact over the snapshot's vectors.

On the 23k-paper index, Chroma's approximate index left out the chunks added after the bulk
build in about half of fresh processes (chroma-core/chroma #3638, #7090), so dense search
no longer asks it.
"""

from __future__ import annotations

import itertools
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from rag.retrieve.search import dense_top

from .conftest import make_assistant

TOPICS = [
    "graph neural networks",
    "protein structure prediction",
    "speech recognition",
    "multi-armed bandits",
    "robotic grasping",
    "image segmentation",
    "machine translation",
    "time series forecasting",
    "recommender systems",
    "tabular anomaly detection",
]
METHODS = [
    "contrastive pretraining",
    "variational inference",
    "sparse attention",
    "knowledge distillation",
    "meta-learning",
    "federated training",
]
SETTINGS = ["few-shot", "streaming", "low-resource", "noisy-label", "distribution-shift"]

ADDED = {  # papers added by a second ingest, and a question each should answer
    "surface-codes": (
        "Decoding Surface Codes with Neural Networks",
        "Quantum error correction with surface codes needs fast decoders; a small "
        "convolutional network decodes syndromes at threshold.",
        "neural decoders for quantum error correction",
    ),
    "wildfire-spread": (
        "Forecasting Wildfire Spread from Satellite Imagery",
        "We predict the next day's burned area from satellite images, wind and fuel maps, "
        "and warn fire crews hours earlier than physical simulators.",
        "predicting how wildfires spread using satellite data",
    ),
    "sign-language": (
        "Continuous Sign Language Translation with Hand Pose Tokens",
        "Hand and body pose keypoints become discrete tokens that a sequence model "
        "translates into spoken-language sentences.",
        "translating sign language videos into text",
    ),
}

SEARCH = """
import json, sys
from rag import Assistant
a = Assistant.open(index_dir=sys.argv[1], llm="extractive")
found = {q: [h.paper.paper_id for h in a.search(q, 5, mode="dense", parse=False)]
         for q in json.loads(sys.argv[2])}
print(json.dumps({"found": found, "chroma": "chromadb" in sys.modules}))
"""


def distractors() -> list[dict]:
    combos = itertools.product(TOPICS, METHODS, SETTINGS)
    return [
        {
            "id": f"bulk-{n}",
            "title": f"{method.capitalize()} for {topic} in {setting} settings",
            "abstract": f"We study {topic} in the {setting} setting. Our approach uses "
            f"{method} and improves over strong baselines on {n % 7 + 3} benchmarks.",
            "venue": "BulkConf",
            "year": 2020 + n % 5,
        }
        for n, (topic, method, setting) in enumerate(combos)
    ]


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def test_papers_added_after_a_bulk_build_are_found_from_every_fresh_process(
    tmp_path: Path, embedder
) -> None:
    index = tmp_path / "idx"
    a = make_assistant(index, embedder)
    assert a.ingest([write_jsonl(tmp_path / "bulk.jsonl", distractors())]).added == 300
    added = [
        {"id": pid, "title": title, "abstract": abstract, "venue": "AddConf", "year": 2024}
        for pid, (title, abstract, _) in ADDED.items()
    ]
    assert a.ingest([write_jsonl(tmp_path / "added.jsonl", added)]).added == len(ADDED)

    questions = {question: pid for pid, (*_, question) in ADDED.items()}
    for n in range(4):  # fresh processes: each opens the folder and its snapshot anew
        result = fresh_search(index, list(questions))
        for question, pid in questions.items():
            assert result["found"][question][0] == pid, (question, result["found"][question])
        # once a snapshot is cached, a fresh process answers without loading Chroma
        assert n == 0 or not result["chroma"]

    # a later ingest changes the version: the next fresh process reads the new papers
    late = {
        "id": "late",
        "title": "Tactile Sensing for Dexterous In-Hand Manipulation",
        "abstract": "Fingertip tactile sensors let a robot hand rotate unseen objects.",
    }
    assert a.ingest([write_jsonl(tmp_path / "late.jsonl", [late])]).added == 1
    question = "robot hands that use touch sensors to rotate objects"
    assert fresh_search(index, [question])["found"][question][0] == "late"


def fresh_search(index: Path, questions: list[str]) -> dict:
    run = subprocess.run(
        [sys.executable, "-c", SEARCH, str(index), json.dumps(questions)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout.strip().splitlines()[-1])


def test_exact_search_ranks_every_allowed_chunk_by_cosine() -> None:
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(500, 8)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    query = vectors[42] + 0.01
    best = dense_top(vectors, query, 5, None)
    cosines = vectors @ query
    assert [i for i, _ in best] == list(np.argsort(-cosines)[:5])
    assert best[0][0] == 42 and best[0][1] == float(cosines[42])
    mask = np.ones(500, dtype=np.float32)
    mask[42] = 0  # filtered out: never returned, however close
    assert 42 not in [i for i, _ in dense_top(vectors, query, 500, mask)]
    assert len(dense_top(vectors, query, 500, mask)) == 499
    assert dense_top(vectors, query, 5, np.zeros(500, dtype=np.float32)) == []
