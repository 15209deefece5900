"""What tests and benchmarks use in place of a real model: a scripted generator with the
``rag.answer.generators.Generator`` contract, passed as ``Assistant(generators={"local": ...})``."""

from __future__ import annotations

from collections.abc import Callable, Iterator

from .answer.generators import Model
from .answer.llm import Messages


class ScriptedGenerator(Model):
    """A model that writes a fixed reply, or one made from its prompt, word by word.

    It stands for a real model where one will not write what a case needs (a bogus
    citation, an injected instruction obeyed, a number no abstract holds); ``prompts``
    holds each prompt it was given (its messages' contents, one per line).
    """

    def __init__(self, reply: str | Callable[[str], str]) -> None:
        super().__init__(llm=None)
        self.script = reply
        self.prompts: list[str] = []

    def chat(self, messages: Messages) -> Iterator[str]:
        prompt = "\n".join(m["content"] for m in messages)
        self.prompts.append(prompt)
        reply = self.script(prompt) if callable(self.script) else self.script
        for i, word in enumerate(reply.split(" ")):
            yield word if i == 0 else " " + word
