"""The MiniLM sentence embedder's forward pass in numpy, for questions and short texts.

Importing torch and sentence-transformers takes seconds; this needs only numpy,
``tokenizers`` and ``safetensors`` and gives the same vectors (cosine > 0.999) for the
bundled all-MiniLM-L6-v2: a BERT encoder, mean pooling over the tokens, unit length.
``Embedder`` uses it for a few texts in a process that has not loaded torch; ingestion,
with its large batches, stays on torch.
"""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

from .errors import ConfigError

# Texts per forward pass, sorted by length: small batches pad least and stay in the CPU's
# caches (4 texts a pass took 0.85 s for 40 abstract sentences, 16 took 1.3 s)
_BATCH = 4


def supports(path: str | Path) -> bool:
    """Whether the model folder is a BERT encoder with mean pooling and normalisation."""
    path = Path(path)
    try:
        config = json.loads((path / "config.json").read_text())
        pooling = json.loads((path / "1_Pooling" / "config.json").read_text())
        modules = json.loads((path / "modules.json").read_text())
    except (OSError, ValueError, KeyError):
        return False
    modes = {k for k, v in pooling.items() if k.startswith("pooling_mode_") and v is True}
    return (
        config.get("model_type") == "bert"
        and config.get("hidden_act") == "gelu"
        and config.get("position_embedding_type", "absolute") == "absolute"
        and (path / "model.safetensors").is_file()
        and modes == {"pooling_mode_mean_tokens"}
        and [m.get("type", "").rsplit(".", 1)[-1] for m in modules]
        == ["Transformer", "Pooling", "Normalize"]
    )


class QueryEncoder:
    """Unit-length float32 vectors for texts, computed with numpy alone."""

    def __init__(self, path: str | Path, max_tokens: int = 256) -> None:
        from safetensors.numpy import load_file
        from tokenizers import Tokenizer

        path = Path(path)
        if not supports(path):
            raise ConfigError(f"{path} is not a BERT mean-pooling model; use the torch embedder.")
        config = json.loads((path / "config.json").read_text())
        self.heads = int(config["num_attention_heads"])
        self.layers = int(config["num_hidden_layers"])
        self.eps = float(config.get("layer_norm_eps", 1e-12))
        self.max_tokens = min(max_tokens, int(config["max_position_embeddings"]))
        weights = load_file(str(path / "model.safetensors"))
        self.w = {
            k.removeprefix("bert."): v.astype(np.float32, copy=False) for k, v in weights.items()
        }
        for name, value in self.w.items():  # the layers' matrices, as (inputs, outputs):
            if name.startswith("encoder.") and value.ndim == 2:  # ~15% faster products
                self.w[name] = np.ascontiguousarray(value.T)
        for layer in range(self.layers):  # query, key and value in one product
            p = f"encoder.layer.{layer}.attention.self."
            parts = [p + part for part in ("query.", "key.", "value.")]
            self.w[p + "qkv.weight"] = np.concatenate([self.w.pop(q + "weight") for q in parts], 1)
            self.w[p + "qkv.bias"] = np.concatenate([self.w.pop(q + "bias") for q in parts])
        # the file's own settings truncate and pad to 128; sentence-transformers does neither
        self.tokenizer = Tokenizer.from_file(str(path / "tokenizer.json"))
        self.tokenizer.no_padding()
        self.tokenizer.enable_truncation(self.max_tokens)
        _one_blas_thread()

    def encode(self, texts: list[str]) -> np.ndarray:
        """One unit-length row per text, in the order given."""
        dim = self.w["embeddings.word_embeddings.weight"].shape[1]
        out = np.zeros((len(texts), dim), dtype=np.float32)
        if not texts:
            return out
        ids = [e.ids for e in self.tokenizer.encode_batch(texts)]
        order = sorted(range(len(texts)), key=lambda i: len(ids[i]))
        batches = [order[start : start + _BATCH] for start in range(0, len(order), _BATCH)]

        def forward(rows: list[int]) -> np.ndarray:
            return self._forward([ids[i] for i in rows])

        # numpy lets go of the GIL in its loops: batches run on every core at once
        vectors = map(forward, batches) if len(batches) == 1 else _pool().map(forward, batches)
        for rows, batch in zip(batches, vectors, strict=True):
            out[rows] = batch
        return out

    # -- the model -----------------------------------------------------------------------------
    def _forward(self, batch: list[list[int]]) -> np.ndarray:
        longest = max(len(ids) for ids in batch)
        tokens = np.zeros((len(batch), longest), dtype=np.int64)
        mask = np.zeros((len(batch), longest), dtype=np.float32)
        for row, ids in enumerate(batch):
            tokens[row, : len(ids)] = ids
            mask[row, : len(ids)] = 1.0
        x = self._embed(tokens)
        bias = (1.0 - mask)[:, None, None, :] * np.finfo(np.float32).min
        for layer in range(self.layers):
            x = self._layer(x, bias, f"encoder.layer.{layer}.")
        pooled = (x * mask[:, :, None]).sum(axis=1) / np.maximum(mask.sum(axis=1), 1e-9)[:, None]
        norms = np.maximum(np.linalg.norm(pooled, axis=1, keepdims=True), 1e-12)
        return (pooled / norms).astype(np.float32)

    def _embed(self, tokens: np.ndarray) -> np.ndarray:
        w = self.w
        x = (
            w["embeddings.word_embeddings.weight"][tokens]
            + w["embeddings.position_embeddings.weight"][: tokens.shape[1]][None]
            + w["embeddings.token_type_embeddings.weight"][0]
        )
        return self._norm(x, "embeddings.LayerNorm.")

    def _layer(self, x: np.ndarray, bias: np.ndarray, p: str) -> np.ndarray:
        attention = self._attention(x, bias, p + "attention.self.")
        x = self._norm(
            x + self._dense(attention, p + "attention.output.dense."),
            p + "attention.output.LayerNorm.",
        )
        hidden = _gelu(self._dense(x, p + "intermediate.dense."))
        return self._norm(x + self._dense(hidden, p + "output.dense."), p + "output.LayerNorm.")

    def _attention(self, x: np.ndarray, bias: np.ndarray, p: str) -> np.ndarray:
        b, n, d = x.shape
        h = self.heads

        qkv = self._dense(x, p + "qkv.").reshape(b, n, 3, h, d // h).transpose(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(d // h, dtype=np.float32) + bias
        scores = np.exp(scores - scores.max(axis=-1, keepdims=True))
        scores /= scores.sum(axis=-1, keepdims=True)
        return (scores @ v).transpose(0, 2, 1, 3).reshape(b, n, d)

    def _dense(self, x: np.ndarray, p: str) -> np.ndarray:
        weight = self.w[p + "weight"]  # stored transposed: (inputs, outputs)
        out = x.reshape(-1, x.shape[-1]) @ weight  # one matrix product for the whole batch
        out += self.w[p + "bias"]
        return out.reshape(*x.shape[:-1], weight.shape[1])

    def _norm(self, x: np.ndarray, p: str) -> np.ndarray:
        mean = x.mean(axis=-1, keepdims=True)
        var = ((x - mean) ** 2).mean(axis=-1, keepdims=True)
        return (x - mean) / np.sqrt(var + self.eps) * self.w[p + "weight"] + self.w[p + "bias"]


_POOL: ThreadPoolExecutor | None = None
_POOL_LOCK = threading.Lock()


def _pool() -> ThreadPoolExecutor:
    """One thread per core, shared by every encoder and request (no oversubscription)."""
    global _POOL
    with _POOL_LOCK:
        if _POOL is None:
            _POOL = ThreadPoolExecutor(os.cpu_count() or 1, thread_name_prefix="rag-encoder")
        return _POOL


def _one_blas_thread() -> None:
    """Run numpy's BLAS on one thread: the matrices here are small, and on a busy machine
    OpenBLAS's spinning threads made a question take 50x longer; concurrent requests use
    the other cores."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # installed with sentence-transformers; without it, BLAS's default
        return
    threadpool_limits(1, user_api="blas")


def _gelu(x: np.ndarray) -> np.ndarray:
    """BERT's exact GELU, x * Phi(x), with erf from Abramowitz-Stegun 7.1.26 (error < 2e-7)."""
    z = np.abs(x) * np.float32(1 / np.sqrt(2))
    t = 1.0 / (1.0 + np.float32(0.3275911) * z)
    poly = t * (
        0.254829592 + t * (-0.284496736 + t * (1.421413741 + t * (-1.453152027 + t * 1.061405429)))
    )
    erf = (1.0 - poly * np.exp(-z * z)) * np.sign(x)
    return (0.5 * x * (1.0 + erf)).astype(np.float32, copy=False)
