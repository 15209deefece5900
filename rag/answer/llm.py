"""The language models, as llama-index LLMs: the local GGUF model and OpenAI-compatible
endpoints, and their errors as this package's. ``rag.answer.generators`` makes answers with them.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import LLMAuthError, LLMError, LLMUnavailableError
from ..settings import LLMSettings

Messages = list[dict[str, str]]


def use_as_default(llm: Any) -> Any:
    """Make llama-index use this LLM and no embedder of its own (its defaults call OpenAI)."""
    from llama_index.core import Settings
    from llama_index.core.embeddings import MockEmbedding

    Settings.llm = llm
    # retrieval is done by this package; llama-index must never embed (or reach OpenAI)
    Settings.embed_model = MockEmbedding(embed_dim=1)
    return llm


def usable_cores() -> int:
    """The cores this process may run on: the local model generates on all of them (llama.cpp's
    own default, half, assumes two hardware threads per core)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # not on Linux
        return max(1, os.cpu_count() or 1)


def local_llm(settings: LLMSettings) -> Any:
    from ..models import local_llm_path

    path = settings.local.model_path or local_llm_path()
    if not Path(path).exists():
        raise LLMUnavailableError(
            f"No model file at {path}. Run `make setup` or fix llm.local.model_path."
        )
    return _local_class()(
        model_path=str(path),
        n_ctx=settings.local.n_ctx,
        n_threads=settings.local.n_threads,
        max_tokens=settings.local.max_tokens,
        temperature=settings.temperature,
    )


def openai_llm(settings: LLMSettings) -> Any:
    from llama_index.llms.openai_like import OpenAILike

    cfg = settings.openai
    defaults = type(cfg)()
    # the usual OpenAI variables apply when the RAG_ ones are not set
    base_url = cfg.base_url if cfg.base_url != defaults.base_url else None
    api_key = cfg.api_key.get_secret_value()
    if api_key == defaults.api_key.get_secret_value():
        api_key = os.environ.get("OPENAI_API_KEY", api_key)
    return OpenAILike(
        model=cfg.model,
        api_base=base_url or os.environ.get("OPENAI_BASE_URL") or defaults.base_url,
        api_key=api_key,
        is_chat_model=True,
        context_window=8192,
        temperature=settings.temperature,
        max_tokens=cfg.max_tokens,
        timeout=cfg.timeout,
        max_retries=cfg.max_retries,  # the client backs off on 429, 5xx and dropped connections
    )


def stream_chat(llm: Any, messages: Messages) -> Iterator[str]:
    """Text pieces of the model's reply; endpoint failures become ``LLMError``s."""
    from llama_index.core.llms import ChatMessage

    chat = [ChatMessage(role=m["role"], content=m["content"]) for m in messages]
    try:
        for chunk in llm.stream_chat(chat):
            if chunk.delta:
                yield chunk.delta
    except LLMError:
        raise
    except Exception as exc:
        raise _translate(exc, llm) from exc


def _translate(exc: Exception, llm: Any) -> LLMError:
    """The endpoint's error as this package's, chosen by its class."""
    where = getattr(llm, "api_base", None) or "the model"
    for classes, message, error in _errors():
        if isinstance(exc, classes):
            return error(message.format(where=where, exc=exc))
    return LLMError(f"The LLM failed: {exc}")


def _errors() -> list[tuple[tuple[type[Exception], ...], str, type[LLMError]]]:
    """The OpenAI client's and httpx's errors, and what each means to the user (imported
    only once a call has failed)."""
    import httpx
    import openai

    return [
        (
            (openai.AuthenticationError, openai.PermissionDeniedError),
            "{where} refused the API key. Set RAG_LLM__OPENAI__API_KEY.",
            LLMAuthError,
        ),
        (
            (openai.APIConnectionError, httpx.ConnectError, httpx.ConnectTimeout),
            "Cannot reach the LLM endpoint {where}. Start it, or fix RAG_LLM__OPENAI__BASE_URL.",
            LLMUnavailableError,
        ),
        (
            (openai.NotFoundError,),
            "{where} does not serve that model. Fix RAG_LLM__OPENAI__MODEL. ({exc})",
            LLMError,
        ),
    ]


_LOCAL_CLASS: Any = None


def _chat_prompt(llama: Any, messages: Messages) -> str:
    """``messages`` as the model's own chat template (stored in the GGUF file) writes them,
    ready for the assistant's reply; ChatML where the file has none."""
    template = llama.metadata.get("tokenizer.chat_template")
    if not template:
        turns = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
        return turns + "<|im_start|>assistant\n"
    from llama_cpp.llama_chat_format import Jinja2ChatFormatter

    def text(token: int) -> str:
        return llama._model.token_get_text(token) if token != -1 else ""

    formatter = Jinja2ChatFormatter(
        template=template, eos_token=text(llama.token_eos()), bos_token=text(llama.token_bos())
    )
    typed: Any = messages  # llama.cpp's typed dicts are these dicts
    return formatter(messages=typed).prompt


def _local_class() -> Any:
    """Defined on first use so that importing this module does not import llama-index."""
    global _LOCAL_CLASS
    if _LOCAL_CLASS is not None:
        return _LOCAL_CLASS
    from llama_index.core.llms import (
        ChatMessage,
        ChatResponse,
        CompletionResponse,
        CustomLLM,
        LLMMetadata,
    )
    from pydantic import PrivateAttr

    class LocalLlamaCpp(CustomLLM):
        """A GGUF model through llama.cpp, using the chat template stored in the file.

        One generation at a time: llama.cpp contexts are not safe to share between threads.
        """

        model_path: str
        n_ctx: int = 2048
        n_threads: int | None = None
        max_tokens: int = 300
        temperature: float = 0.0
        _llama: Any = PrivateAttr(default=None)
        _lock: Any = PrivateAttr(default_factory=threading.Lock)
        _judged_head: list[int] | None = PrivateAttr(default=None)  # by ``yes_or_no``

        @property
        def metadata(self) -> LLMMetadata:
            return LLMMetadata(
                context_window=self.n_ctx,
                num_output=self.max_tokens,
                is_chat_model=True,
                model_name=Path(self.model_path).name,
            )

        @property
        def llama(self) -> Any:
            if self._llama is None:
                from llama_cpp import Llama

                self._llama = Llama(
                    model_path=self.model_path,
                    n_ctx=self.n_ctx,
                    n_threads=self.n_threads or usable_cores(),
                    verbose=False,
                )
            return self._llama

        def yes_or_no(self, messages: Messages) -> float:
            """How much likelier the reply to ``messages`` starts "Yes" than "No": the
            log-odds of the two words as the reply's first token (nothing is generated).

            The prompt is read in two parts: up to the last paragraph (the abstract), then
            that paragraph (what is asked of it). A head read just before is not read again,
            so a second question of the same abstract costs its own words only; as each part
            is always read on its own, the judgement is the same either way."""
            import numpy as np

            with self._lock:
                llama = self.llama
                prompt = _chat_prompt(llama, messages)
                cut = prompt.rfind("\n\n") + 2
                head = llama.tokenize(prompt[:cut].encode(), False, True)
                tail = llama.tokenize(prompt[cut:].encode(), False, True)
                head = head[max(0, len(head) + len(tail) - (self.n_ctx - 1)) :]
                if head != self._judged_head or llama.input_ids[: len(head)].tolist() != head:
                    llama.reset()
                    llama.eval(head)
                    self._judged_head = head
                llama.n_tokens = len(head)
                llama.eval(tail)
                logits = np.ctypeslib.as_array(llama._ctx.get_logits(), shape=(llama.n_vocab(),))

                def first(word: str) -> int:
                    return int(llama.tokenize(word.encode(), False, True)[0])

                yes = [first(w) for w in ("Yes", " Yes", "yes")]
                no = [first(w) for w in ("No", " No", "no")]
                return float(np.logaddexp.reduce(logits[yes]) - np.logaddexp.reduce(logits[no]))

        def stream_chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> Any:
            payload = [{"role": str(m.role.value), "content": m.content or ""} for m in messages]

            def gen() -> Iterator[ChatResponse]:
                text = ""
                with self._lock:
                    self._judged_head = None  # what generation reads replaces it
                    pieces = self.llama.create_chat_completion(
                        messages=payload,
                        max_tokens=self.max_tokens,
                        temperature=self.temperature,
                        stream=True,
                    )
                    for piece in pieces:
                        delta = piece["choices"][0]["delta"].get("content") or ""
                        text += delta
                        yield ChatResponse(
                            message=ChatMessage(role="assistant", content=text), delta=delta
                        )

            return gen()

        def chat(self, messages: Sequence[ChatMessage], **kwargs: Any) -> ChatResponse:
            final = None
            for final in self.stream_chat(messages):  # noqa: B007 - the last one is the reply
                pass
            return final or ChatResponse(message=ChatMessage(role="assistant", content=""))

        def complete(
            self, prompt: str, formatted: bool = False, **kwargs: Any
        ) -> CompletionResponse:
            reply = self.chat([ChatMessage(role="user", content=prompt)])
            return CompletionResponse(text=reply.message.content or "")

        def stream_complete(self, prompt: str, formatted: bool = False, **kwargs: Any) -> Any:
            def gen() -> Iterator[CompletionResponse]:
                for r in self.stream_chat([ChatMessage(role="user", content=prompt)]):
                    yield CompletionResponse(text=r.message.content or "", delta=r.delta)

            return gen()

    _LOCAL_CLASS = LocalLlamaCpp
    return _LOCAL_CLASS
