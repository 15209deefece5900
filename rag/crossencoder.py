"""Small models trained for this product, scored with onnxruntime: one home for all of them.

Each lives in ``rag/data/models/NAME/``: ``model.onnx`` (a MiniLM cross-encoder, int8),
``tokenizer.json`` and ``manifest.json`` (its SHA-256, input length, what it was trained on,
its calibrated thresholds, and the command that rebuilds it). ``bench/train_crossencoder.py``
trains, exports and writes them. A file that is missing or whose hash does not match is one
``ConfigError`` naming the command that restores it. Loading needs onnxruntime, tokenizers
and numpy: no command imports torch.

A cross-encoder reads a pair of texts together, ``[CLS] query [SEP] passage [SEP]``, and
gives one logit: how well the passage holds the query.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

from .errors import ConfigError

MODELS = Path(__file__).resolve().parent / "data" / "models"
_CACHE = 8192  # pairs whose logits are kept
_BATCH_TOKENS = 4096  # tokens per forward pass, padding included


def restore_hint(name: str) -> str:
    return (
        f"Restore it with `git checkout -- rag/data/models/{name}`, "
        f"or retrain it with `python bench/train_crossencoder.py {name}`."
    )


class CrossEncoder:
    """A trained pair scorer: ``logits(pairs)`` and ``probabilities(pairs)``; the model is
    loaded on first use, once, and checked against its manifest."""

    def __init__(self, name: str, folder: Path | None = None, threads: int = 0) -> None:
        self.name = name
        self.folder = folder or MODELS / name
        self.threads = threads
        self._lock = threading.Lock()
        self._kept: OrderedDict[tuple[str, str], float] = OrderedDict()
        self.seconds = 0.0  # spent scoring, all calls together (bench/answer_latency.py)
        self.pairs_scored = 0

    @cached_property
    def manifest(self) -> dict[str, Any]:
        path = self.folder / "manifest.json"
        try:
            manifest = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            raise ConfigError(
                f"The {self.name} model's manifest ({path}) is missing or unreadable. "
                + restore_hint(self.name)
            ) from None
        for file, digest in manifest.get("sha256", {}).items():
            if file_sha256(self.folder / file) != digest:
                raise ConfigError(
                    f"The {self.name} model file {self.folder / file} is missing or altered. "
                    + restore_hint(self.name)
                )
        return manifest

    @property
    def thresholds(self) -> dict[str, float]:
        """The calibrated decision thresholds, by use, on the logit scale."""
        return {k: float(v) for k, v in self.manifest.get("thresholds", {}).items()}

    @cached_property
    def _session(self) -> Any:
        from .models import onnx_session

        manifest = self.manifest  # checks the files first
        return onnx_session(self.folder / manifest["model"], threads=self.threads or 1)

    @cached_property
    def _tokenizer(self) -> Any:
        from tokenizers import Tokenizer

        self.manifest  # noqa: B018  (checks the files first)
        tok = Tokenizer.from_file(str(self.folder / "tokenizer.json"))
        tok.enable_truncation(int(self.manifest["max_length"]), strategy="longest_first")
        tok.no_padding()
        return tok

    def logits(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        """One logit per (query, passage) pair; pairs seen recently are not scored again."""
        with self._lock:
            known = {p: self._kept[p] for p in pairs if p in self._kept}
        todo = list(dict.fromkeys(p for p in pairs if p not in known))
        if todo:
            started = time.perf_counter()
            known.update(zip(todo, self._score(todo), strict=True))
            self.seconds += time.perf_counter() - started
            self.pairs_scored += len(todo)
            with self._lock:
                for p in todo:
                    self._kept[p] = known[p]
                while len(self._kept) > _CACHE:
                    self._kept.popitem(last=False)
        return np.array([known[p] for p in pairs], dtype=np.float32)

    def probabilities(self, pairs: Sequence[tuple[str, str]]) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-self.logits(pairs)))

    def _score(self, pairs: list[tuple[str, str]]) -> list[float]:
        encodings = self._tokenizer.encode_batch(pairs)
        order = np.argsort([-len(e.ids) for e in encodings], kind="stable")  # longest first
        out = np.zeros(len(pairs), dtype=np.float32)
        start = 0
        while start < len(order):
            longest = len(encodings[order[start]].ids)
            size = max(1, _BATCH_TOKENS // max(longest, 1))
            rows = order[start : start + size]
            width = max(len(encodings[i].ids) for i in rows)
            ids = np.zeros((len(rows), width), dtype=np.int64)
            types = np.zeros_like(ids)
            mask = np.zeros_like(ids)
            for r, i in enumerate(rows):
                e = encodings[i]
                ids[r, : len(e.ids)] = e.ids
                types[r, : len(e.ids)] = e.type_ids
                mask[r, : len(e.ids)] = 1
            feed = {"input_ids": ids, "attention_mask": mask, "token_type_ids": types}
            out[rows] = self._session.run(None, feed)[0].reshape(-1)
            start += size
        return out.tolist()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    try:
        with path.open("rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return ""
    return digest.hexdigest()
