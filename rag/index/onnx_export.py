"""Export a sentence-transformers model to ONNX, once, for ``rag.index.embedder`` to run.

This is the only module that imports torch, and only ``make setup`` (through
``python -m rag.models``) or a process that finds the export missing runs it, in a
subprocess of its own: ``python -m rag.index.onnx_export SOURCE FOLDER``.

The graph takes ``input_ids`` and ``attention_mask`` (batch and sequence dynamic) and gives
the sentence vector: the transformer with eager attention, mean pooling over the unmasked
tokens and, where the model normalises, unit length. The int8 file is the fp32 graph with
its weights quantized per channel (``onnxruntime.quantization.quantize_dynamic``). Both are
checked against sentence-transformers on ``REFERENCE_TEXTS`` before they are put in place,
and recorded in ``manifest.json`` with their SHA-256 (see ``rag.models.embedder_onnx``).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import warnings
from pathlib import Path
from typing import Any

import numpy as np

# Lowest cosine to sentence-transformers an export may have on REFERENCE_TEXTS. fp32 is the
# same computation; int8 measured 0.985-0.99 on abstracts (docs/speed.md).
MIN_COSINE = {"fp32": 0.999, "int8": 0.97}
OPSET = 17

REFERENCE_TEXTS = [
    "Which papers tackle model merging?",
    "graph neural networks for molecule property prediction",
    "RLHF",
    "",
    "We propose $O(\\sqrt{T})$ regret with a $(K{+}1)$-way discriminator.",
    "ÉCOLE: apprentissage par renforcement profond, données hétérogènes",
    "图神经网络 and graph transformers",
    "COUNTERFACTUAL EXPLANATIONS FOR BLACK-BOX CLASSIFIERS",
    "Bayesian optimization; Gaussian processes; acquisition functions; batch settings.",
    # longer than the 256-token window: truncated the same way on both sides
    "Counterfactual explanations are essential for actionable recourse, yet their "
    "reliability is often compromised in low-density regions. " * 30,
]


def export(source: Path, folder: Path, files: dict[str, str]) -> dict[str, Any]:
    """Write ``files`` (precision -> file name) into ``folder``; return what was checked."""
    import torch
    from sentence_transformers import SentenceTransformer

    reference = SentenceTransformer(
        str(source),
        device="cpu",
        local_files_only=True,
        model_kwargs={"attn_implementation": "eager"},  # traces to plain matrix products
    )
    fp32 = folder / files["fp32"]
    inputs = (torch.ones((2, 8), dtype=torch.int64), torch.ones((2, 8), dtype=torch.int64))
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the TorchScript exporter's deprecation notice
        torch.onnx.export(
            _sentence_graph(reference),
            inputs,
            str(fp32),
            input_names=["input_ids", "attention_mask"],
            output_names=["sentence_embedding"],
            dynamic_axes={
                "input_ids": {0: "batch", 1: "sequence"},
                "attention_mask": {0: "batch", 1: "sequence"},
                "sentence_embedding": {0: "batch"},
            },
            opset_version=OPSET,
            dynamo=False,  # the traced graph: one file, no onnxscript
        )
    if "int8" in files:
        _quantize(fp32, folder / files["int8"])
    expected = reference.encode(REFERENCE_TEXTS, normalize_embeddings=True)
    window = int(reference.max_seq_length or 512)
    cosines = {p: _min_cosine(folder / f, source, window, expected) for p, f in files.items()}
    return {"min_cosine": cosines, "max_tokens": window, "torch": torch.__version__}


def _sentence_graph(reference: Any) -> Any:
    """What is traced: the transformer, mean pooling, and unit length if the model has it."""
    import torch

    modules = [type(m).__name__ for m in reference]
    pooling = reference[1].get_config_dict().get("pooling_mode") if len(modules) > 1 else None
    if modules[:2] != ["Transformer", "Pooling"] or pooling != "mean":
        raise SystemExit(f"only mean-pooling sentence-transformers models export, not {modules}")
    normalize = "Normalize" in modules

    class SentenceGraph(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.encoder = reference[0].auto_model

        def forward(self, input_ids: Any, attention_mask: Any) -> Any:
            out = self.encoder(input_ids=input_ids, attention_mask=attention_mask)
            tokens = out.last_hidden_state
            mask = attention_mask.unsqueeze(-1).to(tokens.dtype)
            pooled = (tokens * mask).sum(1) / mask.sum(1).clamp(min=1e-9)
            return torch.nn.functional.normalize(pooled, dim=1) if normalize else pooled

    return SentenceGraph().eval()


def _quantize(fp32: Path, int8: Path) -> None:
    import logging

    from onnxruntime.quantization import QuantType, quantize_dynamic

    logging.getLogger().setLevel(logging.ERROR)  # "consider pre-processing": not for this graph
    quantize_dynamic(str(fp32), str(int8), per_channel=True, weight_type=QuantType.QInt8)


def _min_cosine(model: Path, source: Path, window: int, expected: np.ndarray) -> float:
    """The export's lowest cosine to sentence-transformers over the reference texts, each
    embedded alone (int8 quantizes a batch's activations together, padding included)."""
    from tokenizers import Tokenizer

    from ..models import onnx_session

    tokenizer = Tokenizer.from_file(str(source / "tokenizer.json"))
    tokenizer.enable_truncation(window)
    tokenizer.no_padding()  # the file's own setting pads to 128
    session = onnx_session(model, threads=0)  # as the embedder runs it
    cosines = []
    for text, want in zip(REFERENCE_TEXTS, expected, strict=True):
        ids = np.array([tokenizer.encode(text).ids], dtype=np.int64)
        got = session.run(None, {"input_ids": ids, "attention_mask": np.ones_like(ids)})[0][0]
        cosines.append(float(got @ want / np.linalg.norm(got)))
    return min(cosines)


def main(argv: list[str] | None = None) -> int:
    """Export into a temporary folder, check, then write ``result.json`` for the caller."""
    parser = argparse.ArgumentParser(prog="python -m rag.index.onnx_export")
    parser.add_argument("source", type=Path, help="sentence-transformers model folder")
    parser.add_argument("folder", type=Path, help="where the files go (created)")
    parser.add_argument("--files", required=True, help='JSON: {"fp32": "name.onnx", ...}')
    args = parser.parse_args(argv)
    from transformers.utils import logging as hf_logging  # after rag's offline switches

    hf_logging.disable_progress_bar()
    args.folder.mkdir(parents=True, exist_ok=True)
    result = export(args.source.resolve(), args.folder, json.loads(args.files))
    low = {p: c for p, c in result["min_cosine"].items() if c < MIN_COSINE[p]}
    if low:
        print(
            f"the export differs from sentence-transformers: lowest cosine {low}", file=sys.stderr
        )
        return 1
    fd, tmp = tempfile.mkstemp(dir=args.folder, suffix=".json")
    with os.fdopen(fd, "w") as f:
        json.dump(result, f)
    os.replace(tmp, args.folder / "result.json")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
