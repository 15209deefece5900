"""The generator contract every backend keeps (stream, stop, errors), and question handlers
tried in a declared order."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Any

import httpx
import openai
import pytest

from rag import Answer, Assistant, ConfigError, LLMError, LLMUnavailableError
from rag.answer.generators import GENERATORS, Extractive, Generator, Model, make_generator
from rag.answer.handlers import HANDLERS, Asked, relevant_hits
from rag.answer.llm import local_llm, openai_llm
from rag.models import smollm_path
from rag.settings import Settings
from rag.testing import ScriptedGenerator

from .conftest import make_assistant
from .servers import free_port

QUESTION = "How much does RLER improve over the best RLIR baseline?"


def smoke_model() -> Generator:
    """The local backend's generator with the small smoke-test model (its text is nonsense,
    its streaming is real)."""
    settings = Settings().llm.model_copy(deep=True)
    settings.local.model_path = smollm_path()
    settings.local.max_tokens = 16
    return Model(local_llm(settings))


MAKERS: dict[str, Callable[[], Generator]] = {
    "extractive": Extractive,
    "scripted": lambda: ScriptedGenerator("RLER improves by 4.2 points [1]."),
    "local": smoke_model,
}


@pytest.fixture(scope="module")
def sources(bundled_index, embedder) -> tuple[list[Any], list[Any]]:
    a = make_assistant(bundled_index, embedder)
    relevant = relevant_hits(a, QUESTION, a.search(QUESTION, 3))
    from rag.answer.answering import build_sources

    return build_sources(relevant, a.sentence_vectors, question=QUESTION), relevant


@pytest.mark.parametrize("name", MAKERS)
def test_a_generator_streams_text_pieces(name: str, sources) -> None:
    generator = MAKERS[name]()
    pieces = list(generator.reply(QUESTION, *sources))
    assert pieces and all(isinstance(p, str) for p in pieces)
    assert "".join(pieces).strip()
    assert isinstance(generator.writes, bool)


@pytest.mark.parametrize("name", MAKERS)
def test_a_generator_stopped_early_answers_again(name: str, sources) -> None:
    generator = MAKERS[name]()
    first: Iterator[str] = generator.reply(QUESTION, *sources)
    assert next(first)
    first.close()  # the reader went away: the rest is never asked for
    again = "".join(generator.reply(QUESTION, *sources))
    assert again.strip()


class Failing:
    """A llama-index LLM whose call fails the way the OpenAI client does."""

    api_base = "http://127.0.0.1:9/v1"

    def __init__(self, error: Exception) -> None:
        self.error = error

    def stream_chat(self, messages: Any) -> Any:
        raise self.error


REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


@pytest.mark.parametrize(
    "error",
    [openai.APIConnectionError(request=REQUEST), httpx.ConnectError("no", request=REQUEST)],
)
def test_a_models_endpoint_failure_is_the_packages_error(error: Exception, sources) -> None:
    with pytest.raises(LLMUnavailableError, match="Cannot reach"):
        list(Model(Failing(error)).reply(QUESTION, *sources))


def test_an_unreachable_openai_endpoint_is_a_clear_error(sources) -> None:
    settings = Settings().llm.model_copy(deep=True)
    settings.openai.base_url = f"http://127.0.0.1:{free_port()}/v1"
    settings.openai.max_retries = 0
    settings.openai.timeout = 5
    with pytest.raises(LLMError, match="Cannot reach"):
        list(Model(openai_llm(settings)).reply(QUESTION, *sources))


def test_every_backend_is_made_by_name_and_no_other() -> None:
    assert set(GENERATORS) == {"extractive", "local", "openai"}
    assert make_generator("extractive", Settings().llm).writes is False
    with pytest.raises(ConfigError, match="Unknown LLM backend"):
        make_generator("gpt-17", Settings().llm)


def test_a_generator_passed_in_answers_for_its_backend(bundled_index, embedder) -> None:
    scripted = ScriptedGenerator("RLER improves by 4.2 points [1].")
    a = make_assistant(bundled_index, embedder, backend="local", generators={"local": scripted})
    answer = a.ask(QUESTION)
    assert scripted.prompts and QUESTION in scripted.prompts[0]
    assert answer.backend == "local"
    assert "4.2" not in answer.text  # no cited abstract holds it: the check removed it


class Echo:
    """A kind of question added by a test: "echo: ..." is answered with its own words."""

    kind = "echo"

    def matches(self, asked: Asked) -> bool:
        return asked.query.startswith("echo:")

    def answer(self, asked: Asked) -> Iterator[str | Answer]:
        text = asked.query.removeprefix("echo:").strip()
        yield text
        yield Answer(text=text, grounded=False, query=asked.query)


def test_a_handler_declared_in_the_order_is_picked_up(bundled_index, embedder) -> None:
    plain = make_assistant(bundled_index, embedder)
    a = Assistant(plain.settings, plain.store, embedder, handlers=[Echo(), *HANDLERS])
    answer = a.ask("echo: hello")
    assert answer.text == "hello" and answer.backend == "extractive"
    assert a.kind("echo: hello") == "echo"
    assert a.kind("Which papers are about model merging?") == "list"
    assert a.kind(QUESTION) == "papers"
    assert a.kind("How do CSR and OPIC differ in what they evaluate?") == "comparison"
    assert plain.kind("echo: hello") == "papers"  # not in its order: an ordinary question
    only_echo = Assistant(plain.settings, plain.store, embedder, handlers=[Echo()])
    with pytest.raises(ConfigError, match="no handler takes this question"):
        only_echo.ask(QUESTION)
