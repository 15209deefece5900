"""The learned fusion: the shipped model loads, and it ranks with the signals BM25 lacks."""

from __future__ import annotations

import numpy as np

from rag.index.lexical import query_terms
from rag.index.ranking import FEATURES, bundled_model


def test_the_bundled_model_loads_with_every_feature() -> None:
    model = bundled_model()
    assert model.features == FEATURES
    assert model.weights.shape == model.mean.shape == model.scale.shape == (len(FEATURES),)
    assert np.all(model.scale > 0)


def test_a_verb_and_its_noun_and_a_phrase_of_the_field_count_as_one() -> None:
    terms = query_terms("How can I defend CLIP against adversarial images?")
    assert ("defend", "defenc", "defens") in terms
    assert "exampl" in terms[-1]  # adversarial images ~ adversarial examples
    assert query_terms("images of cats")[0] == ("imag",)  # only within the phrase


def test_learned_fusion_puts_the_paper_a_question_describes_first(bundled) -> None:
    """None of the question's words but CLIP and "test time" is the abstract's own."""
    question = "How can I defend CLIP against adversarial images at test time?"
    hits = bundled.search(question, 3, mode="hybrid")
    assert "Contrastive Spectral Rectification" in hits[0].paper.abstract
    assert 0 < hits[-1].score <= hits[0].score <= 1


def test_candidates_carry_one_feature_row_per_paper(bundled) -> None:
    found = bundled.retriever.candidates("random Fourier features combined with flow matching")
    assert found.features.shape == (len(found.paper_ids), len(FEATURES))
    best = found.paper_ids[int(np.argmax(found.features[:, FEATURES.index("pairs")]))]
    assert "Random Fourier Features" in bundled.retriever.corpus.papers[best].abstract
