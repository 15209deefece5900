"""The numpy MiniLM gives the vectors sentence-transformers gives, without importing torch."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import numpy as np

from rag.embedder import Embedder
from rag.query_encoder import QueryEncoder, supports

TEXTS = [
    "Which papers tackle model merging?",
    "graph neural networks for molecule property prediction",
    "RLHF",
    "",
    "a",
    "What is the regret bound of Thompson sampling in linear bandits?",
    "Papers on diffusion models from ICLR 2018",
    "How do transformers handle long contexts efficiently?",
    "We propose $O(\\sqrt{T})$ regret with a $(K{+}1)$-way discriminator.",
    "VAE vs. GAN: which gives sharper samples (FID < 10)?",
    "ÉCOLE: apprentissage par renforcement profond, données hétérogènes",
    "图神经网络 and graph transformers",
    "   leading and trailing spaces, tabs\tand\nnewlines   ",
    "COUNTERFACTUAL EXPLANATIONS FOR BLACK-BOX CLASSIFIERS",
    "def f(x): return x ** 2  # code in a question",
    "https://proceedings.mlr.press/v97/paper.html",
    "the the the the the the the the",
    "Bayesian optimization; Gaussian processes; acquisition functions; batch settings.",
    "Does federated learning with differential privacy hurt accuracy on non-IID clients?",
    # longer than the 256-token window: both truncate it the same way
    " ".join(
        [
            "Counterfactual explanations are essential for actionable recourse, yet their "
            "reliability is often compromised in low-density regions."
        ]
        * 30
    ),
]


def test_numpy_vectors_match_sentence_transformers(embedder: Embedder) -> None:
    encoder = embedder.light_encoder
    assert encoder is not None
    light = encoder.encode(TEXTS)
    reference = embedder.model.encode(TEXTS, normalize_embeddings=True, convert_to_numpy=True)
    cosines = np.sum(light * reference, axis=1)
    assert light.shape == (len(TEXTS), embedder.dim) and light.dtype == np.float32
    assert np.allclose(np.linalg.norm(light, axis=1), 1.0, atol=1e-5)
    assert cosines.min() >= 0.999, [TEXTS[i][:40] for i in np.flatnonzero(cosines < 0.999)]


def test_batches_and_single_texts_agree(embedder: Embedder) -> None:
    encoder = embedder.light_encoder
    assert encoder is not None
    batch = encoder.encode(TEXTS)
    alone = np.stack([encoder.encode([t])[0] for t in TEXTS])
    assert np.allclose(batch, alone, atol=1e-5)  # padding and masks change nothing


def test_the_window_is_the_embedders(embedder: Embedder) -> None:
    encoder = QueryEncoder(embedder.path, max_tokens=16)
    long = "graph neural networks " * 40
    # only the first 16 tokens count, as with sentence-transformers' max_seq_length
    assert np.allclose(encoder.encode([long]), encoder.encode([long + " and more words"]))


def test_other_architectures_are_left_to_torch(tmp_path: Path, embedder: Embedder) -> None:
    assert supports(embedder.path)
    model = tmp_path / "model"
    model.mkdir()
    config = json.loads(Path(embedder.path, "config.json").read_text())
    (model / "config.json").write_text(json.dumps({**config, "model_type": "roberta"}))
    assert not supports(model)


def test_a_question_from_the_cli_never_imports_torch(bundled_index: Path) -> None:
    """`rag ask --llm extractive` starts fast because torch is never imported."""
    code = (
        "import sys\n"
        "from rag.cli import main\n"
        f"code = main(['ask', '--index-dir', {str(bundled_index)!r}, '--llm', 'extractive',\n"
        "             'How can counterfactual explanations be made robust?'])\n"
        "heavy = sorted(m for m in ('torch', 'sentence_transformers', 'transformers')"
        " if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
        "sys.exit(code)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "HEAVY []" in run.stdout, run.stdout[-500:]
    assert "[1]" in run.stdout  # it answered, citing a paper


def test_a_process_with_torch_embeds_questions_with_torch(embedder: Embedder) -> None:
    embedder.model  # noqa: B018 - loads torch into this process
    assert "torch" in sys.modules and not embedder._light(1)
    question = "Which papers tackle model merging?"
    via_torch = embedder.embed_query(question)
    assert embedder.light_encoder is not None
    assert float(via_torch @ embedder.light_encoder.encode([question])[0]) >= 0.999
