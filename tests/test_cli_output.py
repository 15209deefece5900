"""What `rag ask` and `rag search` print: the answer once, as readable text, then only what
the check changed and the references."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from rag import Answer, Citation, Paper, Removed, Step
from rag.cli import _print_streamed, main
from rag.jsonform import answer_json

DENSITYFLOW = Paper(
    "densityflow",
    "DensityFlow: generative framework",
    r"This density score is learned via Noise Contrastive Estimation, leveraging a "
    r"$(K{+}1)$-way discriminator. Experiments show that \textit{DensityFlow} is valid.",
    title_derived=True,
    venue="ICML",
    year=2026,
)
STATEMENT = r"DensityFlow leverages a $(K{+}1)$-way discriminator [1]."


def final_answer(**kw: Any) -> Answer:
    fields: dict[str, Any] = {
        "text": STATEMENT,
        "grounded": True,
        "query": "What does DensityFlow use?",
        "citations": (Citation(1, DENSITYFLOW, "leveraging a $(K{+}1)$-way discriminator."),),
        "removed": (Removed("It is 8x faster [1].", "the number 8 is in no cited abstract"),),
    }
    return Answer(**{**fields, **kw})


def test_the_answer_is_printed_once_then_what_the_check_removed(capsys: Any) -> None:
    events = [Step("searching"), Step("reading"), STATEMENT, final_answer()]
    _print_streamed(iter(events))
    out = capsys.readouterr().out
    assert out.count("DensityFlow leverages a (K+1)-way discriminator [1].") == 1
    assert "Checked answer" not in out and "As checked" not in out
    assert "Removed: It is 8x faster [1]. (the number 8 is in no cited abstract)" in out
    assert "[1] DensityFlow: generative framework (derived title). ICML 2026" in out
    assert '"leveraging a (K+1)-way discriminator."' in out  # the quote, readable
    assert "$" not in out and "\\" not in out
    lines = out.splitlines()
    assert lines.index("References:") > next(i for i, x in enumerate(lines) if "Removed" in x)


def test_an_answer_the_check_changed_after_streaming_is_shown_as_checked(capsys: Any) -> None:
    _print_streamed(iter(["A draft that was replaced.", final_answer(removed=())]))
    out = capsys.readouterr().out
    assert "As checked:\nDensityFlow leverages a (K+1)-way discriminator [1]." in out
    assert "Removed" not in out


def test_answer_json_lists_removed_statements_with_reasons() -> None:
    data = answer_json(final_answer())
    assert data["removed"] == [
        {"statement": "It is 8x faster [1].", "reason": "the number 8 is in no cited abstract"}
    ]


@pytest.mark.parametrize(
    ("args", "shown", "not_shown"),
    [
        (["search", "model merging", "--k", "3"], "Trap²", "$^{2}$"),
        (["ask", "Which paper uses a (K+1)-way discriminator?", "--llm", "extractive"],
         "(K+1)-way", "{+}"),
    ],
)  # fmt: skip
def test_the_commands_print_latex_as_readable_text(
    bundled_index: Path, capsys: Any, args: list[str], shown: str, not_shown: str
) -> None:
    assert main([*args, "--index-dir", str(bundled_index)]) == 0
    out = capsys.readouterr().out
    assert shown in out and not_shown not in out
    if args[0] == "ask":
        answer = out.split("(searched for:")[0].strip()
        first = answer.splitlines()[0]
        assert out.count(first) == 1  # streamed once, never printed again
        assert "References:" in out
