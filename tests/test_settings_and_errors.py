"""Settings precedence, the one error boundary, and every `rag` command once.

Wrong settings, endpoint failures and Chroma failures all arrive as this package's errors
(``rag.errors``) with a message saying what to do; the CLI prints that one line.
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import httpx
import openai
import pytest

from rag import Assistant, ConfigError, LLMAuthError, LLMError, LLMUnavailableError
from rag.answer.llm import stream_chat
from rag.cli import main
from rag.settings import get_settings

REQUEST = httpx.Request("POST", "http://127.0.0.1:9/v1/chat/completions")


@pytest.fixture()
def no_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A working directory with no rag.toml and no RAG_ setting in the environment but the
    test suite's own."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("RAG_CONFIG", raising=False)
    for name in ("RAG_RETRIEVAL__K", "RAG_RETRIEVAL__RRF_K", "RAG_STORE__INDEX_DIR"):
        monkeypatch.delenv(name, raising=False)
    return tmp_path


# -- settings --------------------------------------------------------------------------------
def test_settings_precedence_is_defaults_then_file_then_environment_then_flag(
    no_config: Path, monkeypatch: pytest.MonkeyPatch, capsys: Any
) -> None:
    (no_config / "rag.toml").write_text(
        '[retrieval]\nk = 7\nrrf_k = 10\n[store]\nindex_dir = "from-file"\n'
    )
    monkeypatch.setenv("RAG_RETRIEVAL__RRF_K", "20")
    monkeypatch.setenv("RAG_STORE__INDEX_DIR", "from-env")
    assert main(["settings", "--index-dir", "from-flag"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert shown["retrieval"]["candidates"] == 50  # the default: nothing sets it
    assert shown["retrieval"]["k"] == 7  # the file over the default
    assert shown["retrieval"]["rrf_k"] == 20  # the environment over the file
    assert shown["store"]["index_dir"] == "from-flag"  # the flag over the environment


def test_a_backend_that_does_not_exist_is_a_config_error(no_config: Path) -> None:
    with pytest.raises(ConfigError, match=r"^Bad setting llm\.backend: .*'extractive'"):
        Assistant.open(index_dir=no_config / "idx", llm="bogus")


def test_a_misspelled_setting_is_a_config_error_naming_it(no_config: Path) -> None:
    with pytest.raises(ConfigError, match=r"^No setting retrievl\.k\. "):
        Assistant.open(index_dir=no_config / "idx", **{"retrievl.k": 3})
    with pytest.raises(ConfigError, match=r"^No setting retrieval\.kk\. "):
        Assistant.open(index_dir=no_config / "idx", **{"retrieval.kk": 3})


def test_a_misspelled_section_in_the_file_is_one_line_from_the_cli(
    no_config: Path, capsys: Any
) -> None:
    (no_config / "rag.toml").write_text("[retrievl]\nk = 3\n")
    with pytest.raises(ConfigError, match=r"^No setting retrievl\. Fix rag\.toml"):
        get_settings()
    assert main(["stats", "--index-dir", str(no_config / "idx")]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: No setting retrievl.") and err.count("\n") == 1


def test_a_file_that_is_not_toml_is_a_config_error(no_config: Path) -> None:
    (no_config / "rag.toml").write_text("retrieval = [\n")
    with pytest.raises(ConfigError, match=r"^rag\.toml is not valid TOML"):
        get_settings()


# -- the endpoint's errors, by class -----------------------------------------------------------
class FailingLLM:
    """A llama-index LLM whose call fails the way the OpenAI client does."""

    api_base = "http://127.0.0.1:9/v1"

    def __init__(self, error: Exception) -> None:
        self.error = error

    def stream_chat(self, messages: Any) -> Any:
        raise self.error


def _status(cls: type[openai.APIStatusError], code: int) -> openai.APIStatusError:
    return cls("refused", response=httpx.Response(code, request=REQUEST), body=None)


@pytest.mark.parametrize(
    ("error", "expected", "says"),
    [
        (_status(openai.AuthenticationError, 401), LLMAuthError, "refused the API key"),
        (_status(openai.PermissionDeniedError, 403), LLMAuthError, "refused the API key"),
        (openai.APIConnectionError(request=REQUEST), LLMUnavailableError, "Cannot reach"),
        (openai.APITimeoutError(request=REQUEST), LLMUnavailableError, "Cannot reach"),
        (httpx.ConnectError("refused", request=REQUEST), LLMUnavailableError, "Cannot reach"),
        (_status(openai.NotFoundError, 404), LLMError, "does not serve that model"),
        (_status(openai.InternalServerError, 500), LLMError, "The LLM failed"),
    ],
)
def test_endpoint_errors_become_the_packages_by_class(
    error: Exception, expected: type[LLMError], says: str
) -> None:
    with pytest.raises(expected, match=says) as caught:
        list(stream_chat(FailingLLM(error), [{"role": "user", "content": "hi"}]))
    assert type(caught.value) is expected and "\n" not in str(caught.value)
    assert caught.value.__cause__ is error


# -- every command once ------------------------------------------------------------------------
def test_stats_prints_what_the_index_holds(bundled_index: Path, capsys: Any) -> None:
    assert main(["stats", "--index-dir", str(bundled_index)]) == 0
    out = capsys.readouterr().out
    assert "papers:   19\n" in out and "venues:   ICML (19)" in out and "years:    2026 (19)" in out


def test_search_json_lists_hits_with_their_papers(bundled_index: Path, capsys: Any) -> None:
    argv = ["search", "model merging", "--json", "--k", "3", "--index-dir", str(bundled_index)]
    assert main(argv) == 0
    hits = json.loads(capsys.readouterr().out)
    assert 1 <= len(hits) <= 3
    assert all(h["paper"]["venue"] == "ICML" and h["evidence"] for h in hits)
    assert "OPIC" in hits[0]["paper"]["title"]


def test_chat_reads_questions_from_stdin_until_an_empty_line(
    bundled_index: Path, capsys: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    questions = "Which paper tackles model merging?\n/new\nWhat does the CSR paper report?\n\n"
    monkeypatch.setattr("sys.stdin", io.StringIO(questions))
    assert main(["chat", "--llm", "extractive", "--index-dir", str(bundled_index)]) == 0
    out = capsys.readouterr().out
    assert out.count("References:") == 2  # both questions answered, then the empty line quits
    assert "OPIC" in out and "CSR" in out


def test_topics_json_places_every_paper_in_one_theme(bundled_index: Path, capsys: Any) -> None:
    argv = ["topics", "--json", "--llm", "extractive", "--index-dir", str(bundled_index)]
    assert main(argv) == 0
    topics = json.loads(capsys.readouterr().out)
    assert topics and all(t["label"] and t["terms"] for t in topics)
    ids = [p["paper_id"] for t in topics for p in t["papers"]]
    assert len(ids) == len(set(ids)) == sum(t["size"] for t in topics) == 19
