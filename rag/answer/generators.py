"""Who writes an answer's text from its sources: one contract for every backend.

A ``Generator`` turns a question and the abstracts it is answered from into text pieces.
``writes`` tells how far to trust them: a language model writes text of its own (each
statement is checked against the abstract it cites, and the abstracts' sentences fill in
what it leaves out), the extractive generator only quotes the abstracts. Backends are made
by name from ``GENERATORS``; a caller may pass its own, such as
``rag.testing.ScriptedGenerator``, to ``Assistant(generators=...)``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import Any, Protocol

from ..errors import ConfigError
from ..settings import LLMSettings
from .answering import ScoredHit, Source, build_messages, extractive_reply, stream_reply
from .llm import Messages, local_llm, openai_llm, stream_chat, use_as_default
from .verifier import Verifier


class Generator(Protocol):
    """Writes an answer from sources; errors of its endpoint are ``rag.LLMError``s."""

    writes: bool  # its own text (checked, completed from the abstracts), not quotes

    def reply(
        self, question: str, sources: Sequence[Source], scored: Sequence[ScoredHit]
    ) -> Iterator[str]:
        """Text pieces of the answer, citing ``sources`` by their numbers ([1], [2], ...);
        ``scored``: the relevant papers, with the scores the sources were chosen by."""
        ...

    def chat(self, messages: Messages) -> Iterator[str]:
        """Text pieces of a reply to chat messages (a theme's name); nothing if it writes
        no text of its own."""
        ...


class Extractive:
    """No model: each source's sentences that best answer the question, cited."""

    writes = False

    def __init__(self, verifier: Verifier | None = None) -> None:
        self.verifier = verifier

    def reply(
        self, question: str, sources: Sequence[Source], scored: Sequence[ScoredHit]
    ) -> Iterator[str]:
        by_id = {s.hit.paper.paper_id: s for s in scored}
        chosen = [by_id[s.paper.paper_id] for s in sources]
        yield extractive_reply(chosen, question, self.verifier)

    def chat(self, messages: Messages) -> Iterator[str]:
        yield from ()


class Model:
    """A llama-index chat model (the local GGUF model, or an OpenAI-compatible endpoint)
    answering from the fenced abstracts."""

    writes = True

    def __init__(self, llm: Any) -> None:
        self.llm = llm

    def reply(
        self, question: str, sources: Sequence[Source], scored: Sequence[ScoredHit]
    ) -> Iterator[str]:
        yield from stream_reply(self.chat(build_messages(question, list(sources))))

    def chat(self, messages: Messages) -> Iterator[str]:
        yield from stream_chat(self.llm, messages)


GENERATORS: dict[str, Callable[[LLMSettings, Verifier | None], Generator]] = {
    "extractive": lambda settings, verifier: Extractive(verifier),
    "local": lambda settings, verifier: Model(use_as_default(local_llm(settings))),
    "openai": lambda settings, verifier: Model(use_as_default(openai_llm(settings))),
}


def make_generator(
    backend: str, settings: LLMSettings, verifier: Verifier | None = None
) -> Generator:
    """The generator a backend's name stands for, built from the LLM settings."""
    if backend not in GENERATORS:
        names = ", ".join(GENERATORS)
        raise ConfigError(f"Unknown LLM backend {backend!r}; use one of {names}.")
    return GENERATORS[backend](settings, verifier)
