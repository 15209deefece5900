"""LaTeX and Markdown in abstracts, written out as readable text: the strings are the real
ones from the bundled ICML 2026 abstracts."""

from __future__ import annotations

from pathlib import Path

import pytest

from rag.text.markup import Span, parse, readable

BUNDLED = Path(__file__).parent.parent / "rag" / "data" / "icml2026_abstracts.txt"
ABSTRACTS = BUNDLED.read_text(encoding="utf-8").split("\n\n")[1:]


def sentence_with(fragment: str) -> str:
    """The bundled sentence holding ``fragment``, so the cases below stay real."""
    for abstract in ABSTRACTS:
        at = abstract.find(fragment)
        if at >= 0:
            start = abstract.rfind(". ", 0, at) + 2 if abstract.rfind(". ", 0, at) >= 0 else 0
            end = abstract.find(". ", at)
            return abstract[start : end + 1 if end >= 0 else len(abstract)]
    raise AssertionError(f"{fragment!r} is not in the bundled abstracts")


@pytest.mark.parametrize(
    ("fragment", "expected"),
    [
        ("we propose Trap$^{2}$,", "we propose Trap², an architecture-agnostic"),
        ("R$^3$-Refiner, a dual-stage", "we propose R³-Refiner, a dual-stage framework"),
        ("a $(K{+}1)$-way discriminator", "leveraging a (K+1)-way discriminator"),
        (r"that \textit{DensityFlow} achieves", "demonstrate that DensityFlow achieves"),
        (r"at \url{https://github.com", "available at https://github.com/G-AILab/DensityFlow."),
        (r"by 6.2\% over", "improves by 6.2% over the best RLIR baseline and is within 3.6% of"),
        (r"(\textbf{RLER})", "ensembled rewards (RLER), which aggregates"),
        (r"forming a \textbf{self-confirming", "forming a self-confirming loop."),
        (r"($\rho_{\text{noise}}$)", "reward noise magnitude (ρ_noise), policy–reward coupling"),
        (r"variety of \emph{cutter operators}", "the variety of cutter operators, and"),
        ("a *governance gap*:", "creates a governance gap: downstream users"),
        ("*Reason--Reflect--Rectify* (R$^3$)", "formalize the Reason–Reflect–Rectify (R³) loop"),
        ("NHANES corpus ($\\approx$ 28k", "(≈ 28k hours; ≈ 11k participants)"),
        (r"any $\beta \in (0,1)$", "for any β ∈ (0,1)."),
        (r"by $O( \log T )$", "upper bounded by O(log T) and"),
        (r"regret $O\left(T^{\max", "achieve regret O(T^(max{β,1−β})) and"),
        ("[https://prithvitarale", "available at https://prithvitarale.github.io/biopm-site/."),
    ],
)
def test_bundled_markup_reads_as_text(fragment: str, expected: str) -> None:
    text = readable(sentence_with(fragment))
    assert expected in text, text
    assert not any(c in text for c in "$\\*"), text


def test_every_bundled_abstract_reads_without_markup() -> None:
    for abstract in ABSTRACTS:
        text = readable(abstract)
        assert not any(c in text for c in "$\\"), text[:200]
        assert "](" not in text and " *" not in text


def test_text_without_markup_is_unchanged() -> None:
    for text in (
        "Plain text, with a hyphen-ated word and 3 < 4.",
        "It costs $5 and $10 a month.",  # prices, not a formula
        "a * b and 2*3*4 are products",
        "[1] and [2, 3] are citation markers",
        "Trap² is already readable",
    ):
        assert readable(text) == text


def test_the_tree_keeps_what_a_renderer_needs() -> None:
    assert parse("Trap$^{2}$") == ("Trap", Span("math", (Span("sup", ("2",)),)))
    assert parse(r"$\rho_{\text{noise}}$") == (
        Span("math", (Span("var", ("ρ",)), Span("sub", ("noise",)))),
    )
    assert parse(r"\textit{DensityFlow} and **bold**") == (
        Span("em", ("DensityFlow",)),
        " and ",
        Span("strong", ("bold",)),
    )
    assert parse("[code](https://x.org/c)") == (Span("link", ("code",), "https://x.org/c"),)
    assert readable("[code](https://x.org/c)") == "code (https://x.org/c)"


def test_more_latex() -> None:
    assert readable(r"$\frac{1}{2}$ and $\frac{a+b}{c}$") == "1/2 and (a+b)/c"
    assert readable(r"$\sqrt{d}$, $\mathbb{R}^n$, $x_1$, $x_{i+1}$") == "√d, ℝⁿ, x₁, x_(i+1)"
    assert readable(r"$\log(n)$ and $n \times d$ and \(a=b\)") == "log(n) and n × d and a = b"
    assert readable(r"``quoted'' and 10\% and \unknown{kept}") == "“quoted” and 10% and kept"
    assert readable("an unclosed $x^2 and \\textbf{unclosed") == "an unclosed $x^2 and unclosed"


def test_an_empty_script_reads_as_nothing() -> None:
    # as an AISTATS 2024 abstract writes it: rendering it crashed the CLI and the web chat
    assert readable(r"regret scales as $\widetilde{O}_{}(d^3 n^{-3/2})$") == (
        "regret scales as O\u0303(d³n^(−3/2))"
    )
    assert readable(r"$x^{}$ and $y_{ }$") == "x and y"
