"""Settings: defaults < config file < environment (``RAG_``, ``__`` nesting) < CLI flags.

The config file is ``rag.toml`` in the working directory, or the file named by
``RAG_CONFIG``. ``rag settings`` prints the effective values.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict, Field, SecretStr, field_validator
from pydantic_settings import (
    BaseSettings,
    PydanticBaseSettingsSource,
    SettingsConfigDict,
    TomlConfigSettingsSource,
)

from .types import BACKENDS, Backend


def backend_name(name: str) -> Backend:
    """The backend named, checked: one of ``BACKENDS``."""
    from .errors import InputError

    if name not in BACKENDS:
        raise InputError(f"Unknown backend {name!r}. Use one of: {', '.join(BACKENDS)}.")
    return cast(Backend, name)


def cache_dir() -> Path:
    """Where built wheels, model files and index snapshots live (shared across checkouts)."""
    base = os.environ.get("RAG_CACHE_DIR") or os.path.join(
        os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"), "rag"
    )
    return Path(base)


def models_dir() -> Path:
    """Where the assembled LLM and the exported embedder live: ``RAG_MODELS_DIR``, else
    ``<cache>/models``."""
    return Path(os.environ.get("RAG_MODELS_DIR") or cache_dir() / "models")


class _Section(BaseModel):
    model_config = ConfigDict(extra="forbid")


class StoreSettings(_Section):
    index_dir: Path = Path("index_store")
    chroma_url: str | None = Field(
        default=None, description="Use a Chroma server (http://host:port) instead of index_dir."
    )
    chroma_token: SecretStr | None = None
    chroma_headers: dict[str, str] = Field(default_factory=dict)
    chroma_timeout: float = Field(
        default=60.0, gt=0, description="Seconds a request to the Chroma server may take."
    )
    collection: str = "papers"


Precision = Literal["fp32", "int8"]


class EmbedderSettings(_Section):
    model: str = Field(default="", description="Model folder; empty means the bundled MiniLM.")
    precision: Precision = Field(
        default="fp32",
        description="The ONNX export run: fp32, or int8 (dynamically quantized, faster).",
    )
    batch_tokens: int = Field(
        default=512, ge=1, description="Tokens (padding included) per forward pass."
    )
    chunk_tokens: int = Field(default=256, description="Most tokens per embedded chunk.")


class RetrievalSettings(_Section):
    k: int = Field(default=5, ge=1, le=50, description="Papers retrieved per question.")
    candidates: int = Field(default=50, description="Chunks taken from each side before fusion.")
    fusion: Literal["learned", "score", "rrf"] = Field(
        default="learned",
        description="How BM25 and dense results are combined: the learned model "
        "(rag/data/fusion.json), normalised scores mixed by lexical_weight, or ranks.",
    )
    rerank: bool = Field(
        default=False,
        description="Re-read the fused top papers with the question by the reranker trained "
        "here (rag/data/models/reranker) and re-order them.",
    )
    rerank_depth: int = Field(
        default=20, ge=2, le=50, description="How many of the fused top papers are re-read."
    )
    lexical_weight: float = Field(default=0.5, description="BM25's share in score fusion.")
    rrf_k: int = 60
    min_similarity: float = Field(
        default=0.37,
        description=(
            "A paper counts as relevant when one of its abstract sentences has this cosine "
            "similarity to the question (or the question names it); with none, refuse."
        ),
    )
    sentence_cache: int = Field(
        default=50_000,
        ge=0,
        description="Abstract sentences whose vectors are kept across questions (1.5 KB each).",
    )
    read_sentences: bool = Field(
        default=True,
        description=(
            "Choose which sentences of a paper answer a question (those the model reads and "
            "the extractive answer quotes) by their closeness to the question and by the "
            "trained verifier's reading of them as an answer (rag/data/models/verifier); "
            "false: closeness alone."
        ),
    )
    blas_threads: int = Field(
        default=1,
        ge=0,
        description=(
            "Threads numpy's BLAS may use in this process, set when an assistant is made "
            "(0: leave BLAS's own choice). The products are small or bound by memory."
        ),
    )


class CheckSettings(_Section):
    judge_lists: bool = Field(
        default=True,
        description=(
            "With the local model as the backend, a list question's closest candidates are "
            "read by it, and the list is those it holds to be asked for (rag/answer/judge.py; "
            "~3.7 s a candidate, six read); false, or another backend: the cosine-and-words "
            "bars decide."
        ),
    )
    judge_premises: bool = Field(
        default=True,
        description=(
            "With the local model as the backend, a question that describes its paper has "
            "its closest sources read by it ('is this the paper the question is about?'; "
            "none: 'no indexed paper does that'), and the paper's abstract ('does it state "
            "the answer?'; no: 'the abstract does not say'), on top of the word checks "
            "(rag/answer/judge.py; ~3 s a source); false, or another backend: the word "
            "checks alone."
        ),
    )
    judge_statements: bool = Field(
        default=True,
        description=(
            "With the local model as the backend, a statement of its answer that the word "
            "check removed for its wording alone (never for a number, a name, an attribution "
            "or the question's words) is read by it against the abstract it cites, and stands "
            "when the model holds the abstract to support it; one the word check kept whose "
            "part says words of two sentences, or whose sentence turns away from it (a "
            "contrast it drops, its numbers in another order), is held back and read the same way "
            "(rag/answer/judge.py; ~3 s an abstract, a few hundredths more a statement of the "
            "same abstract); false, or another backend: the word check alone."
        ),
    )
    verifier: bool = Field(
        default=False,
        description=(
            "Judge whether an abstract holds what a question asks of it (else 'the abstract "
            "does not say') and whether any source does what a 'which paper' question asks "
            "(else 'no indexed paper does that') with the trained verifier "
            "(rag/data/models/verifier); false (the default, see docs/any-conference.md): the "
            "word checks alone."
        ),
    )


class LocalLLMSettings(_Section):
    model_path: Path | None = Field(
        default=None, description="GGUF file; empty means the bundled Qwen2.5-Coder-1.5B."
    )
    n_ctx: int = 2048
    n_threads: int | None = None
    max_tokens: int = 300


class OpenAISettings(_Section):
    base_url: str = "http://127.0.0.1:8080/v1"
    model: str = "local-model"
    api_key: SecretStr = SecretStr("not-needed")
    timeout: float = 60.0
    max_retries: int = 3
    max_tokens: int = 400


class LLMSettings(_Section):
    backend: Backend = "local"
    temperature: float = 0.0
    local: LocalLLMSettings = Field(default_factory=LocalLLMSettings)
    openai: OpenAISettings = Field(default_factory=OpenAISettings)


class ServeSettings(_Section):
    host: str = "127.0.0.1"
    port: int = 7860
    auth: str | None = Field(default=None, description="user:pass for the web chat.")
    concurrency: int = 4
    max_upload_mb: int = 50


class Settings(BaseSettings):
    """All settings of the assistant."""

    model_config = SettingsConfigDict(
        env_prefix="RAG_",
        env_nested_delimiter="__",
        extra="forbid",
        toml_file="rag.toml",
    )

    store: StoreSettings = Field(default_factory=StoreSettings)
    embedder: EmbedderSettings = Field(default_factory=EmbedderSettings)
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    checks: CheckSettings = Field(default_factory=CheckSettings)
    llm: LLMSettings = Field(default_factory=LLMSettings)
    serve: ServeSettings = Field(default_factory=ServeSettings)

    @field_validator("llm", mode="before")
    @classmethod
    def _backend_lower(cls, v: Any) -> Any:
        if isinstance(v, dict) and isinstance(v.get("backend"), str):
            v = {**v, "backend": v["backend"].lower()}
        return v

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        toml = TomlConfigSettingsSource(settings_cls, os.environ.get("RAG_CONFIG", "rag.toml"))
        return (init_settings, env_settings, toml)

    def with_overrides(self, **dotted: Any) -> Settings:
        """A copy with ``section.field`` values replaced; ``None`` values are ignored.

        A name that is no setting, or a value that cannot work, is a ``ConfigError``.
        """
        data = self.model_dump()
        for key, value in dotted.items():
            if value is None:
                continue
            *path, last = key.split(".")
            node = data
            for part in path:
                if not isinstance(node.get(part), dict):
                    raise _unknown(key, "Fix the setting passed")
                node = node[part]
            node[last] = value
        return _validated(lambda: Settings.model_validate(data), "Fix the setting passed")


def get_settings(**dotted: Any) -> Settings:
    """Settings from file and environment, with ``section.field`` overrides applied."""
    return _validated(Settings, "Fix rag.toml or RAG_ variables").with_overrides(**dotted)


def _validated(make: Callable[[], Settings], fix: str) -> Settings:
    """``make()``, its pydantic and TOML errors as one-line ``ConfigError``s."""
    import tomllib

    from pydantic import ValidationError

    from .errors import ConfigError

    try:
        return make()
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        if first["type"] == "extra_forbidden":
            raise _unknown(where, fix) from None
        raise ConfigError(f"Bad setting {where}: {first['msg']}. {fix}.") from None
    except tomllib.TOMLDecodeError as exc:
        path = os.environ.get("RAG_CONFIG", "rag.toml")
        raise ConfigError(f"{path} is not valid TOML ({exc}). Fix it.") from None


def _unknown(name: str, fix: str) -> Exception:
    from .errors import ConfigError

    return ConfigError(f"No setting {name}. {fix}: README.md's settings table lists them.")
