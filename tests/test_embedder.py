"""The embedder: the ONNX export gives sentence-transformers' vectors, is checked by its hash
and made again when missing, and no command imports torch."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from rag import models
from rag.errors import ConfigError
from rag.index.embedder import Embedder
from rag.settings import EmbedderSettings

from .conftest import BUNDLED

TEXTS = [
    "Which papers tackle model merging?",
    "graph neural networks for molecule property prediction",
    "RLHF",
    "",
    "a",
    "What is the regret bound of Thompson sampling in linear bandits?",
    "We propose $O(\\sqrt{T})$ regret with a $(K{+}1)$-way discriminator.",
    "VAE vs. GAN: which gives sharper samples (FID < 10)?",
    "ÉCOLE: apprentissage par renforcement profond, données hétérogènes",
    "图神经网络 and graph transformers",
    "   leading and trailing spaces, tabs\tand\nnewlines   ",
    "COUNTERFACTUAL EXPLANATIONS FOR BLACK-BOX CLASSIFIERS",
    "https://proceedings.mlr.press/v97/paper.html",
    *BUNDLED.read_text(encoding="utf-8").split("\n\n")[1:8],
    # longer than the 256-token window: both truncate it the same way
    "Counterfactual explanations are essential for actionable recourse, yet their "
    "reliability is often compromised in low-density regions. " * 30,
]


@pytest.fixture(scope="module")
def reference(embedder: Embedder) -> np.ndarray:
    """What sentence-transformers (torch, float32) gives for TEXTS."""
    from sentence_transformers import SentenceTransformer

    model = SentenceTransformer(embedder.path, device="cpu", local_files_only=True)
    return np.asarray(model.encode(TEXTS, normalize_embeddings=True), dtype=np.float32)


def test_fp32_vectors_are_sentence_transformers_vectors(embedder, reference) -> None:
    assert embedder.precision == "fp32" and embedder.runtime == "onnxruntime"
    vectors = embedder.embed(TEXTS)
    assert vectors.shape == (len(TEXTS), embedder.dim) == (len(TEXTS), 384)
    assert vectors.dtype == np.float32
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    cosines = np.sum(vectors * reference, axis=1)
    assert cosines.min() >= 0.999, [TEXTS[i][:40] for i in np.flatnonzero(cosines < 0.999)]


def test_int8_vectors_stay_close_to_sentence_transformers(reference) -> None:
    int8 = Embedder(EmbedderSettings(precision="int8"))
    vectors = int8.embed(TEXTS)
    cosines = np.sum(vectors * reference, axis=1)
    assert cosines.min() >= 0.96 and cosines.mean() >= 0.985, cosines
    assert cosines.min() < 0.999  # really the quantized model
    assert int8.provenance.precision == "int8"


def test_batches_and_single_texts_agree(embedder) -> None:
    batch = embedder.embed(TEXTS)
    alone = np.stack([embedder.embed([t])[0] for t in TEXTS])
    assert np.allclose(batch, alone, atol=1e-5)  # padding and masks change nothing


def test_small_batches_give_the_same_vectors(embedder) -> None:
    small = Embedder(EmbedderSettings(batch_tokens=1))  # one text a forward pass
    assert len(small.prepare(TEXTS).batches) == len(TEXTS)
    assert np.allclose(small.embed(TEXTS), embedder.embed(TEXTS), atol=1e-5)


def test_the_window_is_the_chunk_size() -> None:
    short = Embedder(EmbedderSettings(chunk_tokens=16))
    long = "graph neural networks " * 40
    # only the first 16 tokens count, as with sentence-transformers' max_seq_length
    assert np.allclose(short.embed([long]), short.embed([long + " and more words"]))
    assert not np.allclose(short.embed([long]), Embedder().embed([long]))


def test_a_repeated_question_reuses_its_vector_which_no_caller_can_change(embedder) -> None:
    question = "Which paper defends CLIP against adversarial examples at test time?"
    embedder.forget_queries()
    first = embedder.embed_query(question)
    assert embedder.embed_query(question) is first  # asked again: not embedded again
    assert np.allclose(first, embedder.embed([question])[0], atol=1e-5)
    with pytest.raises(ValueError, match="read-only"):
        first[0] = 0.0  # callers share it
    embedder.forget_queries()
    assert embedder.embed_query(question) is not first


def test_no_command_imports_torch(tmp_path: Path) -> None:
    """Ingest, search, ask and the web app run on onnxruntime alone: torch is never
    imported."""
    index = str(tmp_path / "idx")
    code = (
        "import sys\n"
        "from rag import Assistant\n"
        "from rag.cli import main\n"
        "from ui.app import build_app\n"
        f"assert main(['ingest', '--bundled', '--index-dir', {index!r}]) == 0\n"
        f"assert main(['search', '--index-dir', {index!r}, 'model merging']) == 0\n"
        f"assert main(['ask', '--index-dir', {index!r}, '--llm', 'extractive',\n"
        "             'How can counterfactual explanations be made robust?']) == 0\n"
        f"build_app(Assistant.open(index_dir={index!r}, llm='extractive'))  # what serve runs\n"
        "heavy = sorted(m for m in ('torch', 'sentence_transformers', 'transformers')"
        " if m in sys.modules)\n"
        "print('HEAVY', heavy)\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    assert "HEAVY []" in run.stdout, run.stdout[-500:]
    assert "[1]" in run.stdout  # it answered, citing a paper


# -- the export in the model cache -------------------------------------------------------------
@pytest.fixture()
def export_copy(tmp_path: Path, embedder: Embedder) -> Path:
    """A models folder holding a copy of this machine's checked export."""
    models.embedder_onnx(embedder.path, "fp32")
    folder = models.export_folder(embedder.path, tmp_path / "models")
    shutil.copytree(models.export_folder(embedder.path), folder)
    return tmp_path / "models"


def test_the_export_is_recorded_with_its_hash_and_its_check(embedder, export_copy: Path) -> None:
    folder = models.export_folder(embedder.path, export_copy)
    manifest = json.loads((folder / "manifest.json").read_text())
    for precision in ("fp32", "int8"):
        path = models.embedder_onnx(embedder.path, precision, export_copy)
        assert path.parent == folder
        assert manifest["files"][precision]["sha256"] == models._sha256(path)
    assert manifest["min_cosine"]["fp32"] >= 0.999
    assert manifest["source_sha256"] == models._source_sha256(Path(embedder.path))


def test_a_changed_source_model_is_not_run_with_an_old_export(embedder, export_copy) -> None:
    folder = models.export_folder(embedder.path, export_copy)
    manifest = json.loads((folder / "manifest.json").read_text())
    manifest.update(source_sha256="0" * 64, source_state=[])  # as if the package changed
    (folder / "manifest.json").write_text(json.dumps(manifest))
    assert models._checked_export(folder, Path(embedder.path).resolve(), "fp32") is None


@pytest.mark.slow
def test_a_damaged_or_missing_export_is_made_again(embedder, export_copy: Path) -> None:
    """~20 s: one real export (torch, in a subprocess)."""
    folder = models.export_folder(embedder.path, export_copy)
    fp32, int8 = folder / "model-fp32.onnx", folder / "model-int8.onnx"
    good = models._sha256(fp32)
    with fp32.open("r+b") as f:  # one flipped byte: the same size, another hash
        f.seek(fp32.stat().st_size // 2)
        byte = f.read(1)
        f.seek(-1, 1)
        f.write(bytes([byte[0] ^ 0xFF]))
    int8.unlink()
    assert models._checked_export(folder, Path(embedder.path).resolve(), "fp32") is None

    assert models.embedder_onnx(embedder.path, "fp32", export_copy) == fp32
    assert models._sha256(fp32) == good  # the export is deterministic: the same file again
    assert models.embedder_onnx(embedder.path, "int8", export_copy) == int8


def test_an_unknown_precision_is_a_config_error(embedder) -> None:
    with pytest.raises(ConfigError, match="precision 'int4'"):
        models.embedder_onnx(embedder.path, "int4")
