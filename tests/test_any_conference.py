"""Answers about a conference the checks were not written from: ICLR 2018 (a dev corpus of
``eval/corpora``), one question of each kind, judged as ``python eval/run.py --corpus dev``
judges it, with the extractive backend and with the local model."""

from __future__ import annotations

from pathlib import Path

import pytest

from eval.corpora import BY_NAME
from eval.questions import load_questions
from eval.runner import ask, passed
from rag import Assistant

from .conftest import make_assistant

CORPUS = BY_NAME["iclr2018"]
# one of each kind: a described paper's fact, a number, a fact the abstract does not give, a
# false premise, a comparison, a complete list, a follow-up with "it"
ASKED = ("spec-02", "num-01", "uns-01", "fp-08", "cmp-01", "list-08", "fu-02")
QUESTIONS = {q.id: q for q in load_questions(CORPUS.questions) if q.id in ASKED}


@pytest.fixture(scope="module")
def iclr(tmp_path_factory: pytest.TempPathFactory, embedder) -> Path:
    folder = tmp_path_factory.mktemp("iclr2018")
    make_assistant(folder / "index", embedder).ingest([CORPUS.path])
    return folder / "index"


def judged(assistant: Assistant, qid: str, llm: str) -> tuple[bool | None, str]:
    question = QUESTIONS[qid]
    relevant = [p for p in assistant.papers() if p.paper_id in question.relevant]
    outcome = ask(assistant, question, relevant, retrievers=(), llm=llm)
    return passed(outcome), outcome.answer.text


def test_the_questions_are_there() -> None:
    assert sorted(QUESTIONS) == sorted(ASKED)
    assert {q.kind for q in QUESTIONS.values()} == {
        "specific", "numeric", "unstated", "false_premise", "comparison", "list", "followup",
    }  # fmt: skip


@pytest.mark.parametrize("qid", ASKED)
def test_extractive_answers_each_kind_on_another_conference(iclr, embedder, qid) -> None:
    ok, text = judged(make_assistant(iclr, embedder), qid, "extractive")
    assert ok, f"{QUESTIONS[qid].question}\n{text}"


@pytest.mark.slow
@pytest.mark.usefixtures("local_llm_file")
@pytest.mark.parametrize("qid", ASKED)
def test_the_local_model_answers_each_kind_on_another_conference(iclr, embedder, qid) -> None:
    ok, text = judged(make_assistant(iclr, embedder, backend="local"), qid, "local")
    assert ok, f"{QUESTIONS[qid].question}\n{text}"
