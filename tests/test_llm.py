"""The LLM backends for real: the local Qwen model, and an OpenAI-compatible server."""

from __future__ import annotations

import re
import time
from pathlib import Path

import pytest

from rag import Answer, LLMAuthError, LLMUnavailableError
from rag.models import smollm_path

from .conftest import make_assistant
from .servers import free_port, llama_server

pytestmark = pytest.mark.slow
RLER_QUESTION = "How much does RLER improve over the best RLIR baseline?"


def with_backend(bundled_index: Path, embedder, backend: str, **openai: object):
    a = make_assistant(bundled_index, embedder, backend=backend)
    overrides = {f"llm.openai.{k}": v for k, v in openai.items()}
    a.settings = a.settings.with_overrides(**overrides)
    return a


def assert_citations_are_retrieved(answer: Answer) -> None:
    assert answer.citations, answer.text  # else the checks below would pass on nothing
    retrieved = {h.paper.paper_id for h in answer.hits}
    for c in answer.citations:
        assert c.paper.paper_id in retrieved
        assert re.search(rf"\[(\d+, )*{c.number}(, \d+)*\]", answer.text)
        assert c.quote and c.quote in c.paper.abstract  # the sentence the statement rests on
    markers = {int(n) for n in __import__("re").findall(r"\[(\d+)\]", answer.text)}
    assert markers <= {c.number for c in answer.citations}


@pytest.mark.usefixtures("local_llm_file")
def test_local_qwen_answers_a_numeric_question_with_a_checked_citation(bundled_index, embedder):
    a = with_backend(bundled_index, embedder, "local")
    events = list(a.stream(RLER_QUESTION))
    answer = events[-1]
    assert isinstance(answer, Answer) and answer.backend == "local"
    assert "".join(e for e in events if isinstance(e, str)) == answer.text  # shown as checked
    assert answer.coverage == "answered" and "6.2%" in answer.text
    assert answer.citations and answer.citations[0].paper.title.startswith("RLER")
    assert "6.2" in answer.citations[0].quote
    assert_citations_are_retrieved(answer)


@pytest.mark.usefixtures("local_llm_file")
def test_local_qwen_says_no_paper_to_a_false_premise(bundled_index, embedder):
    a = with_backend(bundled_index, embedder, "local")
    for question in [
        "Does any paper here present a new speech recognition model?",
        "Which paper proposes a graph neural network for molecule generation?",
    ]:
        answer = a.ask(question)
        assert answer.coverage in ("no_paper", "not_covered"), answer.text
        assert answer.text.startswith(("No indexed paper does that", "The indexed papers do not"))
        assert "speech recognition model [" not in answer.text
        assert_citations_are_retrieved(answer)


@pytest.mark.usefixtures("local_llm_file")
def test_local_qwen_says_an_unstated_fact_is_not_stated(bundled_index, embedder):
    a = with_backend(bundled_index, embedder, "local")
    answer = a.ask("How many GPUs did OPIC use?")
    assert answer.coverage == "unstated" and answer.text.startswith("The abstract does not say")
    assert answer.citations[0].paper.title.startswith("OPIC")
    assert not re.search(r"\b\d+ GPUs\b", answer.text)


@pytest.mark.usefixtures("local_llm_file")
def test_local_qwen_answers_repeat_nothing_of_the_prompt(bundled_index, embedder):
    from eval.metrics import leaked_runs
    from rag.answer.answering import ANSWER_RULES, SYSTEM_PROMPT

    a = with_backend(bundled_index, embedder, "local")
    for question in [
        "Compare the two model-merging papers.",
        "Which papers are about reinforcement learning?",
    ]:
        answer = a.ask(question)
        assert leaked_runs(answer.text, f"{SYSTEM_PROMPT} {ANSWER_RULES}") == [], answer.text
        assert "FooNet" not in answer.text
        assert_citations_are_retrieved(answer)


@pytest.fixture(scope="module")
def openai_server() -> str:
    with llama_server(smollm_path()) as url:
        yield url


def test_openai_backend_against_a_real_server(bundled_index, embedder, openai_server):
    a = with_backend(bundled_index, embedder, "openai", base_url=openai_server, max_tokens=60)
    events = list(a.stream("Which papers are about model merging?"))
    answer = events[-1]
    assert isinstance(answer, Answer) and answer.backend == "openai"
    assert any(isinstance(e, str) and e for e in events[:-1])
    assert_citations_are_retrieved(answer)  # whatever the small model says, citations hold


def test_unreachable_endpoint_is_a_clear_error(bundled_index, embedder):
    url = f"http://127.0.0.1:{free_port()}/v1"
    a = with_backend(bundled_index, embedder, "openai", base_url=url, max_retries=0, timeout=5)
    started = time.monotonic()
    with pytest.raises(LLMUnavailableError, match="Cannot reach"):
        a.ask(RLER_QUESTION)
    assert time.monotonic() - started < 30


def test_refused_key_is_a_clear_error(bundled_index, embedder):
    with llama_server(smollm_path(), api_key="right-key") as url:
        a = with_backend(bundled_index, embedder, "openai", base_url=url, api_key="wrong-key")
        with pytest.raises(LLMAuthError, match="API key"):
            a.ask(RLER_QUESTION)
