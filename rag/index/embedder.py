"""The sentence embedder: all-MiniLM-L6-v2 (by default) exported to ONNX and run by
onnxruntime, for ingesting and for questions alike.

``make setup`` exports the model once into the model cache, in fp32 and int8, each checked
against sentence-transformers and recorded with its SHA-256 (``rag.models.embedder_onnx``,
which exports again when a file is missing or fails its check). Running it takes
onnxruntime, tokenizers and numpy: no command imports torch.

Texts are tokenized, sorted by length and cut into batches of about ``batch_tokens``
tokens, padding included (small batches stay in the CPU's caches; 512 beat 1,024 and 2,048
here). Batches run one per core, each on a single thread: for a model this small that is
faster than one batch over every core, and no idle thread spins on a busy machine.
"""

from __future__ import annotations

import json
import os
import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import numpy as np

from ..errors import ConfigError
from ..settings import EmbedderSettings
from .store import Provenance

if TYPE_CHECKING:
    from tokenizers import Tokenizer

RUNTIME = "onnxruntime"
_QUERY_CACHE = 1024  # questions whose vectors are kept (1.5 KB each)


def default_model_path() -> str:
    from ..models import embedder_path

    return embedder_path()


@dataclass(frozen=True)
class Batch:
    """Texts of about one length, tokenized and padded: one forward pass."""

    rows: np.ndarray  # positions of the texts in what was given
    ids: np.ndarray  # (texts, tokens) int64
    mask: np.ndarray
    tokens: int  # without padding


@dataclass(frozen=True)
class Prepared:
    """Texts ready for the model: their batches, shortest first."""

    count: int
    batches: list[Batch]

    @property
    def tokens(self) -> int:
        return sum(b.tokens for b in self.batches)


class Embedder:
    """Embeds chunks and questions into unit vectors; counts tokens as the model does."""

    runtime = RUNTIME

    def __init__(self, settings: EmbedderSettings | None = None) -> None:
        self.settings = settings or EmbedderSettings()
        self.path = self.settings.model or default_model_path()
        if not Path(self.path, "config.json").exists():
            raise ConfigError(f"No embedding model in {self.path}. Run `make setup`.")
        self.precision = self.settings.precision
        self._session_lock = threading.Lock()
        self._queries: OrderedDict[str, np.ndarray] = OrderedDict()
        self._queries_lock = threading.Lock()
        self._threads = Threads(cores(), "rag-embed")  # one per core

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
    def provenance(self) -> Provenance:
        """What the index records about the vectors this embedder makes."""
        return Provenance(self.name, self.dim, self.max_tokens, self.runtime, self.precision)

    @cached_property
    def tokenizer(self) -> Tokenizer:
        """The model's tokenizer, counting every token (chunking needs the full count)."""
        tok = self._load_tokenizer()
        tok.no_truncation()
        return tok

    @cached_property
    def _window(self) -> Tokenizer:
        """The tokenizer as the model sees texts: the first ``max_tokens`` tokens."""
        tok = self._load_tokenizer()
        tok.enable_truncation(self.max_tokens)
        return tok

    def _load_tokenizer(self) -> Tokenizer:
        from tokenizers import Tokenizer

        tok = Tokenizer.from_file(str(Path(self.path, "tokenizer.json")))
        tok.no_padding()  # the file's own setting pads every text to 128 tokens
        return tok

    def count_tokens(self, texts: list[str]) -> list[int]:
        """Tokens per text, special tokens included (what the model's window counts)."""
        return [len(e.ids) for e in self.tokenizer.encode_batch(texts)]

    @property
    def session(self) -> Any:
        """The onnxruntime session over the checked export (made again if missing)."""
        with self._session_lock:
            if "_session" not in self.__dict__:
                self.__dict__["_session"] = self._open_session()
            return self.__dict__["_session"]

    def _open_session(self) -> Any:
        from ..models import embedder_onnx, onnx_session

        # one thread a run: batches run side by side instead (module docstring)
        return onnx_session(embedder_onnx(self.path, self.precision), threads=1)

    # -- embedding -----------------------------------------------------------------------------
    def prepare(self, texts: Sequence[str]) -> Prepared:
        """Tokenize and batch texts by length; cheap next to ``run``, so ingesting prepares
        the next texts while the model works."""
        ids = [e.ids for e in self._window.encode_batch(list(texts))]
        order = sorted(range(len(ids)), key=lambda i: len(ids[i]))
        budget = self.settings.batch_tokens
        batches: list[Batch] = []
        start = 0
        for end in range(1, len(order) + 1):  # sorted: the text at end - 1 is the longest
            if end == len(order) or (end - start + 1) * len(ids[order[end]]) > budget:
                batches.append(_pad([ids[i] for i in order[start:end]], order[start:end]))
                start = end
        return Prepared(len(ids), batches)

    def run(
        self, prepared: Prepared, done: Callable[[Batch, np.ndarray], None] | None = None
    ) -> np.ndarray:
        """Unit-length float32 vectors, one row per prepared text, in the order given;
        ``done`` is called on this thread with each batch and its vectors as it finishes."""
        out = np.zeros((prepared.count, self.dim), dtype=np.float32)
        session = self.session

        def forward(batch: Batch) -> Batch:
            feed = {"input_ids": batch.ids, "attention_mask": batch.mask}
            vectors = session.run(None, feed)[0]
            norms = np.maximum(np.linalg.norm(vectors, axis=1, keepdims=True), 1e-12)
            out[batch.rows] = vectors / norms
            return batch

        finished: Iterable[Batch]
        if len(prepared.batches) == 1:  # a question: on this thread, no hand-off
            finished = [forward(prepared.batches[0])]
        else:  # onnxruntime lets go of the GIL: one batch per core at once
            futures = self._submit(forward, prepared.batches)
            finished = (f.result() for f in as_completed(futures))
        for batch in finished:
            if done is not None:
                done(batch, out[batch.rows])
        return out

    def embed(self, texts: list[str]) -> np.ndarray:
        """Unit-length float32 vectors, one row per text."""
        return self.run(self.prepare(texts))

    def embed_query(self, text: str) -> np.ndarray:
        """A question's unit vector (read-only). Recent questions are remembered: answering
        one embeds it more than once."""
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

    def warm_up(self) -> None:
        """Load the model and tokenizer, e.g. while an index loads."""
        self.session  # noqa: B018
        self._window  # noqa: B018

    def close(self) -> None:
        """Stop the threads that run batches, once those running finish; embedding again
        starts them again."""
        self._threads.close()

    def _submit(
        self, forward: Callable[[Batch], Batch], batches: list[Batch]
    ) -> list[Future[Batch]]:
        """The batches handed to this embedder's threads: one per core, shared by its
        requests (no oversubscription)."""
        return [self._threads.submit(forward, b) for b in batches]


def _pad(ids: list[list[int]], rows: list[int]) -> Batch:
    longest = max(len(i) for i in ids)
    tokens = np.zeros((len(ids), longest), dtype=np.int64)
    mask = np.zeros((len(ids), longest), dtype=np.int64)
    for row, seq in enumerate(ids):
        tokens[row, : len(seq)] = seq
        mask[row, : len(seq)] = 1
    return Batch(np.array(rows, dtype=np.int64), tokens, mask, sum(len(i) for i in ids))


T = TypeVar("T")


class Threads:
    """A thread pool made on first use and stopped by ``close`` (once the work running
    finishes); work submitted after that starts it again."""

    def __init__(self, workers: int, name: str) -> None:
        self.workers, self.name = workers, name
        self._pool: ThreadPoolExecutor | None = None
        self._lock = threading.Lock()

    def submit(self, fn: Callable[..., T], *args: Any) -> Future[T]:
        with self._lock:
            if self._pool is None:
                self._pool = ThreadPoolExecutor(self.workers, thread_name_prefix=self.name)
            return self._pool.submit(fn, *args)

    def close(self) -> None:
        with self._lock:
            pool, self._pool = self._pool, None
        if pool is not None:
            pool.shutdown(wait=True)


def cores() -> int:
    """The cores this process may run on."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return os.cpu_count() or 1
