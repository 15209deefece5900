"""The embedder: bfloat16 stays close to float32, and chunk token counts are the model's."""

from __future__ import annotations

import numpy as np
import pytest

from rag.embedder import Embedder
from rag.settings import EmbedderSettings

from .conftest import BUNDLED


def test_bfloat16_vectors_stay_within_cosine_0998_of_float32() -> None:
    texts = [p for p in BUNDLED.read_text(encoding="utf-8").split("\n\n")[1:8]]
    texts += ["model merging", "What does the CSR paper report?"]
    fp32 = Embedder(EmbedderSettings(dtype="float32")).embed(texts)
    bf16 = Embedder(EmbedderSettings(dtype="bfloat16")).embed(texts)
    cosines = np.sum(fp32 * bf16, axis=1)  # both are unit length
    assert cosines.min() >= 0.998, cosines


def test_vectors_are_unit_length_and_sized_as_recorded(embedder: Embedder) -> None:
    vectors = embedder.embed(["graph neural networks", "protein folding with diffusion"])
    assert vectors.shape == (2, embedder.dim) == (2, 384)
    assert np.allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-4)


def test_auto_dtype_uses_bfloat16_only_with_native_support(monkeypatch) -> None:
    import rag.embedder as module

    monkeypatch.setattr(module, "cpu_has_bf16", lambda: False)
    assert Embedder().dtype_name == "float32"
    monkeypatch.setattr(module, "cpu_has_bf16", lambda: True)
    assert Embedder().dtype_name == "bfloat16"


def test_a_repeated_question_reuses_its_vector_which_no_caller_can_change(
    embedder: Embedder,
) -> None:
    question = "Which paper defends CLIP against adversarial examples at test time?"
    embedder.forget_queries()
    first = embedder.embed_query(question)
    assert embedder.embed_query(question) is first  # asked again: not embedded again
    assert np.allclose(first, embedder.embed([question])[0], atol=1e-5)
    with pytest.raises(ValueError, match="read-only"):
        first[0] = 0.0  # callers share it
    embedder.forget_queries()
    assert embedder.embed_query(question) is not first
