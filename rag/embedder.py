"""The sentence embedder (all-MiniLM-L6-v2 by default) and its token counter.

Torch and sentence-transformers are imported on first use only, so that commands
which never embed (``rag stats``) start quickly.
"""

from __future__ import annotations

import json
import sys
import threading
from collections import OrderedDict
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .errors import ConfigError

if TYPE_CHECKING:
    from sentence_transformers import SentenceTransformer
    from tokenizers import Tokenizer

    from .query_encoder import QueryEncoder

from .settings import EmbedderSettings


def cpu_has_bf16() -> bool:
    try:
        flags = Path("/proc/cpuinfo").read_text()
    except OSError:
        return False
    return any(f in flags for f in ("avx512_bf16", "amx_bf16"))


def default_model_path() -> str:
    from .models import embedder_path

    return embedder_path()


_QUERY_CACHE = 1024  # questions whose vectors are kept (1.5 KB each)


class Embedder:
    """Embeds chunks and questions into unit vectors; counts tokens as the model does."""

    def __init__(self, settings: EmbedderSettings | None = None) -> None:
        self.settings = settings or EmbedderSettings()
        self.path = self.settings.model or default_model_path()
        if not Path(self.path, "config.json").exists():
            raise ConfigError(f"No embedding model in {self.path}. Run `make setup`.")
        self._lock = threading.Lock()
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._queries_lock = threading.Lock()

    @cached_property
    def name(self) -> str:
        """A stable name recorded in the index, so a mismatch can be detected."""
        readme = Path(self.path, "README.md")
        if readme.exists() and "all-MiniLM-L6-v2" in readme.read_text(errors="ignore"):
            return "sentence-transformers/all-MiniLM-L6-v2"
        return Path(self.path).name

    @cached_property
    def dim(self) -> int:
        config = json.loads(Path(self.path, "config.json").read_text())
        return int(config["hidden_size"])

    @cached_property
    def max_tokens(self) -> int:
        config = Path(self.path, "sentence_bert_config.json")
        limit = (
            json.loads(config.read_text()).get("max_seq_length", 256) if config.exists() else 256
        )
        return min(int(limit), self.settings.chunk_tokens)

    @cached_property
    def tokenizer(self) -> Tokenizer:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(Path(self.path, "tokenizer.json")))
        tok.no_truncation()
        tok.no_padding()
        return tok

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Tokens per text, special tokens included (what the model's window counts)."""
        return [len(e.ids) for e in self.tokenizer.encode_batch(texts)]

    @cached_property
    def dtype_name(self) -> str:
        """bfloat16 only where the CPU computes it natively; emulated, it is ~5x slower."""
        if self.settings.dtype != "auto":
            return self.settings.dtype
        return "bfloat16" if cpu_has_bf16() else "float32"

    @cached_property
    def model(self) -> SentenceTransformer:
        import torch
        from sentence_transformers import SentenceTransformer

        dtype = torch.bfloat16 if self.dtype_name == "bfloat16" else torch.float32
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # "Loading weights" bars on every start
        model = SentenceTransformer(
            self.path, device="cpu", model_kwargs={"dtype": dtype}, local_files_only=True
        )
        model.max_seq_length = self.max_tokens
        return model

    def embed(self, texts: list[str], batch_size: int | None = None) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        if not texts:
            return np.zeros((0, self.dim), dtype=np.float32)
        if self._light(len(texts)):
            return self._embed_light(texts)
        with self._lock:  # torch on 2 cores: one encode at a time is fastest
            vectors = self.model.encode(
                texts,
                batch_size=batch_size or self.settings.batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.asarray(vectors, dtype=np.float32)

    def embed_query(self, text: str) -> np.ndarray:
        """A question's unit vector (read-only); with numpy unless this process has loaded
        torch. Recent questions are remembered: answering one embeds it more than once."""
        with self._queries_lock:
            vector = self._queries.get(text)
            if vector is not None:
                self._queries.move_to_end(text)
                return vector
        vector = self.embed([text])[0]
        vector.flags.writeable = False
        with self._queries_lock:
            self._queries[text] = vector
            while len(self._queries) > _QUERY_CACHE:
                self._queries.popitem(last=False)
        return vector

    def forget_queries(self) -> None:
        """Empty the question cache (benchmarks timing the embedding clear it)."""
        with self._queries_lock:
            self._queries.clear()

    light_max_texts = 64  # larger batches (ingesting) go to torch, which is faster on them

    def warm_up(self) -> None:
        """Load what embedding a question takes (numpy weights), e.g. while an index loads."""
        self._light(1)

    @cached_property
    def light_encoder(self) -> QueryEncoder | None:
        """The numpy forward pass of this model, or None if it is not a BERT it can run."""
        from .query_encoder import QueryEncoder, supports

        return QueryEncoder(self.path, self.max_tokens) if supports(self.path) else None

    def _light(self, n_texts: int) -> bool:
        """Embed with numpy: a few texts in a process without torch, which takes seconds to
        import (a question from the CLI, a request to the server). Ingesting uses torch."""
        return (
            n_texts <= self.light_max_texts
            and "torch" not in sys.modules
            and self.light_encoder is not None
        )

    def _embed_light(self, texts: list[str]) -> np.ndarray:
        assert self.light_encoder is not None
        return self.light_encoder.encode(texts)
