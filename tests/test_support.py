"""The statement check on small made-up abstracts, not on any indexed corpus."""

from __future__ import annotations

import pytest

from rag.answer import support
from rag.index.embedder import Embedder

TITLE = "Taming Momentum: Stable Adaptive Optimisers"
ABSTRACT = (
    "Several recently proposed adaptive optimisers such as RMSProp, Adam and Nadam scale "
    "their updates by running averages of squared gradients. We show that these methods can "
    "diverge on simple convex problems. We propose TameAdam, an Adam variant with a long-term "
    "memory of past gradients, and prove that it converges."
)


def made_up(title: str, text: str, embedder: Embedder) -> support.Abstract:
    """A made-up abstract prepared for checking, its sentences and their parts embedded."""
    sentences = list(support.Abstract.of(1, title, text, embedder.embed(["x"])).sentences)
    return support.Abstract.of(1, title, text, embedder.embed(sentences), embedder.embed)


@pytest.fixture(scope="module")
def abstract(embedder: Embedder) -> support.Abstract:
    return made_up(TITLE, ABSTRACT, embedder)


def kept(text: str, abstract: support.Abstract, embedder: Embedder) -> support.Verdict:
    statement = support.Statement(text, (1,), 0)
    return support.judge(statement, embedder.embed_query(support.plain(text)), {1: abstract})


def test_a_name_the_abstract_gives_only_as_earlier_work_is_not_the_papers(
    abstract: support.Abstract, embedder: Embedder
) -> None:
    wrong = kept("The Adam variant with long-term memory proposed here is called Nadam.", abstract,
                 embedder)  # fmt: skip
    assert not wrong.kept
    assert "Nadam" in wrong.reason
    right = kept("The Adam variant with long-term memory proposed here is called TameAdam.",
                 abstract, embedder)  # fmt: skip
    assert right.kept, right.reason
    # a statement about the earlier work may name it
    assert kept("Existing optimisers such as Nadam scale their updates by running averages.",
                abstract, embedder).kept  # fmt: skip


def test_a_title_before_a_quoted_sentence_is_not_a_claim(embedder: Embedder) -> None:
    """A listed line "Title: sentence" quotes the sentence; words of the title ("Only",
    "All") are the paper's name, not claims the sentence must make."""
    title = "Translation Using Monolingual Corpora Only"
    text = (
        "We learn to translate without any parallel data. Sentences of two languages are "
        "mapped into one latent space by a shared encoder."
    )
    paper = made_up(title, text, embedder)
    quoted = f"{title}: We learn to translate without any parallel data."
    assert kept(quoted, paper, embedder).kept
    # the same word said as a claim of the sentence still needs the abstract to say it
    claimed = "We learn to translate only from parallel data."
    assert not kept(claimed, paper, embedder).kept


def test_a_title_with_a_question_mark_stays_one_heading() -> None:
    title = "Do GANs learn the distribution? Some Theory and Empirics"
    statements = support.split_statements(
        f"- {title}: GANs learn distributions "
        "of low support [1]. They study BiGAN [1].\n- Plain title: One. Two [2].",
        [title, "Plain title"],
    )
    assert [s.text for s in statements] == [
        "Do GANs learn the distribution? Some Theory and Empirics: GANs learn distributions "
        "of low support.",
        "They study BiGAN.",
        "Plain title: One.",
        "Two.",
    ]
    assert [s.cites for s in statements] == [(1,), (1,), (2,), (2,)]
    # a bullet whose text before the colon is no paper's title is split as any other line
    written = support.split_statements("- It improves accuracy. It is fast: 2x [1].", [title])
    assert [s.text for s in written] == ["It improves accuracy.", "It is fast: 2x."]


def test_a_quoted_formula_with_a_greek_letter_stands(embedder: Embedder) -> None:
    """A sentence quoted from the abstract with "$\\sigma^2$" in it is in the abstract; a
    formula the abstract does not have is not."""
    title = "Channel Capacity in Learning Gaussian Mixtures"
    text = (
        "We learn the centers of a Gaussian mixture with covariance $\\sigma^2 I$. "
        "The threshold occurs at $\\frac{\\log k}{d} = \\frac12\\log( 1+\\frac{1}{\\sigma^2})$, "
        "the capacity of the Gaussian channel."
    )
    paper = made_up(title, text, embedder)
    assert support.unsupported(paper.sentences[1], paper) == ""
    assert "is not in the cited abstract" in support.unsupported(
        "The threshold occurs at $\\tau^3$.", paper
    )


def test_a_sentence_naming_a_kind_and_its_narrower_kind_stands_as_quoted(
    embedder: Embedder,
) -> None:
    """ "... interdomain sparse approximations and sparse approximations for Cox processes"
    quoted from the abstract stands; a statement widening the abstract's narrower kind to
    the broader one ("both convex and strongly convex" of "strongly convex") does not."""
    title = "Sparse Variational Inference as a Divergence between Processes"
    text = (
        "We interpret sparse variational inference as a divergence between processes. "
        "Finally we show how the framework sheds light on interdomain sparse approximations "
        "and sparse approximations for Cox processes. Its regret bound holds for strongly "
        "convex losses."
    )
    paper = made_up(title, text, embedder)
    assert kept(paper.sentences[1], paper, embedder).kept
    widened = kept("Its regret bound holds for convex and strongly convex losses.", paper, embedder)
    assert not widened.kept and '"strongly convex" only' in widened.reason


def test_a_short_form_the_abstract_spells_out_is_the_abstract_s(embedder: Embedder) -> None:
    """ "GP", "GCNs" and "ResNet" name what the abstract spells out ("Gaussian process",
    "graph convolutional networks", "residual networks"); a short form it does not spell
    out is still not in it."""
    title = "Scalable Change Surfaces"
    text = (
        "We present a scalable Gaussian process model for change surfaces. We compare it with "
        "graph convolutional networks and residual networks on three spatial datasets."
    )
    paper = made_up(title, text, embedder)
    assert support.unsupported("The GP model is compared with GCNs and ResNet.", paper) == ""
    assert '"GAN"' in support.unsupported("The GP model is compared with a GAN.", paper)
