"""Train a cross-encoder from the bundled MiniLM, export it to ONNX, and put it in the product.

    python bench/verifier_data.py                       # the pairs (bench/out/verifier/pairs.jsonl)
    python bench/train_crossencoder.py verifier          # train (resumable), export, install
    python bench/train_crossencoder.py verifier --export-only
    python bench/reranker_data.py && python bench/train_crossencoder.py reranker

The model is all-MiniLM-L6-v2's transformer (its first ``--layers`` layers) with one linear
head on the [CLS] token, trained with binary cross-entropy on (query, passage, label) rows,
batches of about one length. 3% of the papers are held out (by a hash of the paper id) to
report AUC and accuracy. A checkpoint is written every ``--save-every`` steps to
``bench/out/NAME/checkpoint.pt`` and a rerun resumes from it. The export is checked against
torch on the held-out pairs; int8 (dynamic quantization) is installed when its AUC is within
0.005 of fp32's, else fp32. It goes to ``rag/data/models/NAME/`` with ``tokenizer.json`` and
a ``manifest.json`` of hashes (``rag.crossencoder`` checks them); thresholds already there are
kept (``bench/calibrate_verifier.py`` sets them).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import math
import random
import shutil
import sys
import time
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from rag.evaluation import (  # noqa: E402
    MODELS,
    embedder_path,
    file_sha256,
)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("name", help="model name: its pairs are bench/out/NAME/pairs.jsonl")
    p.add_argument("--pairs", type=Path)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--max-length", type=int, default=128)
    p.add_argument("--epochs", type=float, default=1.0)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--lr", type=float, default=5e-5)
    p.add_argument("--limit", type=int, help="train on the first N pairs only")
    p.add_argument("--cap", type=int, help="at most N pairs of each kind and label")
    p.add_argument("--save-every", type=int, default=300)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--export-only", action="store_true")
    p.add_argument(
        "--pooling",
        choices=["cls", "mean"],
        default="cls",
        help="the head reads the [CLS] token (cls) or the mean of every token (mean: the "
        "bundled MiniLM's own pooling, which a head can read from the first step)",
    )
    args = p.parse_args(argv)
    work = REPO / "bench" / "out" / args.name
    pairs_path = args.pairs or work / "pairs.jsonl"
    rows = [json.loads(x) for x in pairs_path.read_text(encoding="utf-8").split("\n") if x]
    if args.limit:
        rows = rows[: args.limit]
    if args.cap:
        rows = capped(rows, args.cap)
    train = [r for r in rows if not _held(r["paper"])]
    held = [r for r in rows if _held(r["paper"])]
    print(f"{len(train)} training pairs, {len(held)} held out", flush=True)

    import torch
    from tokenizers import Tokenizer
    from transformers import AutoConfig, AutoModelForSequenceClassification

    torch.set_num_threads(args.threads)
    torch.manual_seed(0)
    source = Path(embedder_path())
    config = AutoConfig.from_pretrained(source, num_labels=1, num_hidden_layers=args.layers)
    if args.pooling == "mean":
        model = MeanPooled(source, args.layers)
    else:
        model = AutoModelForSequenceClassification.from_pretrained(source, config=config)
    tok = Tokenizer.from_file(str(source / "tokenizer.json"))
    tok.enable_truncation(args.max_length, strategy="longest_first")
    tok.no_padding()
    checkpoint = work / "checkpoint.pt"
    if not args.export_only:
        fit(model, tok, train, held, args, checkpoint)
    elif checkpoint.exists():
        model.load_state_dict(torch.load(checkpoint, weights_only=False)["model"])
    model.eval()
    install(model, tok, held, args, source, rows_count=len(train))
    return 0


def MeanPooled(source: Path, layers: int):  # noqa: N802  (a torch module, made lazily)
    """MiniLM's first ``layers`` layers, the mean of its token states, one linear logit;
    called like a sequence classifier (``.logits``)."""
    import torch
    from transformers import AutoConfig, AutoModel

    class _Out:
        def __init__(self, logits):
            self.logits = logits

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            config = AutoConfig.from_pretrained(source, num_hidden_layers=layers)
            self.bert = AutoModel.from_pretrained(  # eager: a traced graph keeps the mask
                source, config=config, add_pooling_layer=False, attn_implementation="eager"
            )
            self.head = torch.nn.Linear(config.hidden_size, 1)

        def forward(self, input_ids, attention_mask, token_type_ids):
            states = self.bert(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).last_hidden_state
            weights = attention_mask.unsqueeze(-1).to(states.dtype)
            pooled = (states * weights).sum(1) / weights.sum(1).clamp(min=1.0)
            return _Out(self.head(pooled))

    return Model()


def capped(rows: list[dict], cap: int) -> list[dict]:
    """At most ``cap`` rows of each (kind, label), drawn at random (seeded), in file order."""
    groups: dict[tuple[str, int], list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault((r["kind"], r["label"]), []).append(i)
    rng = random.Random(0)
    keep = sorted(
        i for idx in groups.values() for i in (rng.sample(idx, cap) if len(idx) > cap else idx)
    )
    return [rows[i] for i in keep]


def _held(paper: str) -> bool:
    return hashlib.sha1(paper.encode()).digest()[1] < 8  # ~3%


def batches(tok, rows: list[dict], size: int, seed: int) -> list[list[dict]]:
    """Rows in batches of about one length (fast on the CPU), the batches shuffled."""
    rng = random.Random(seed)
    rows = list(rows)
    rng.shuffle(rows)
    chunks = [rows[i : i + size * 50] for i in range(0, len(rows), size * 50)]
    out = []
    for chunk in chunks:
        chunk.sort(key=lambda r: len(r["query"]) + len(r["evidence"]))
        out += [chunk[i : i + size] for i in range(0, len(chunk), size)]
    rng.shuffle(out)
    return out


def encode(tok, rows: list[dict]):
    import torch

    enc = tok.encode_batch([(r["query"], r["evidence"]) for r in rows])
    width = max(len(e.ids) for e in enc)
    ids = torch.zeros((len(rows), width), dtype=torch.long)
    types = torch.zeros_like(ids)
    mask = torch.zeros_like(ids)
    for i, e in enumerate(enc):
        n = len(e.ids)
        ids[i, :n] = torch.tensor(e.ids)
        types[i, :n] = torch.tensor(e.type_ids)
        mask[i, :n] = 1
    return ids, mask, types


def fit(model, tok, train, held, args, checkpoint: Path) -> None:
    import torch

    epochs = max(1, math.ceil(args.epochs))
    plan = [b for e in range(epochs) for b in batches(tok, train, args.batch, seed=e)]
    plan = plan[: int(len(plan) * args.epochs / epochs)]
    optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    warmup = max(1, len(plan) // 20)

    def schedule(step: int) -> float:
        return min(1.0, (step + 1) / warmup) * max(0.0, (len(plan) - step) / len(plan))

    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, schedule)
    step = 0
    if checkpoint.exists():
        state = torch.load(checkpoint, weights_only=False)
        model.load_state_dict(state["model"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        step = state["step"]
        print(f"resumed at step {step} of {len(plan)}", flush=True)
    loss_fn = torch.nn.BCEWithLogitsLoss()
    model.train()
    started, seen, running = time.monotonic(), 0, 0.0
    while step < len(plan):
        rows = plan[step]
        ids, mask, types = encode(tok, rows)
        labels = torch.tensor([float(r["label"]) for r in rows])
        logits = model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits.view(-1)
        loss = loss_fn(logits, labels)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad()
        step += 1
        seen += len(rows)
        running = 0.98 * running + 0.02 * loss.item() if step > 1 else loss.item()
        if step % 25 == 0 or step == len(plan):
            rate = seen / (time.monotonic() - started)
            left = sum(len(b) for b in plan[step:]) / max(rate, 1e-9) / 60
            print(f"step {step}/{len(plan)}  loss {running:.3f}  {rate:.0f} pairs/s  "
                  f"{left:.0f} min left", flush=True)  # fmt: skip
        if step % args.save_every == 0 or step == len(plan):
            save = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                    "scheduler": scheduler.state_dict(), "step": step}  # fmt: skip
            checkpoint.parent.mkdir(parents=True, exist_ok=True)
            torch.save(save, checkpoint.with_suffix(".tmp"))
            checkpoint.with_suffix(".tmp").replace(checkpoint)
        if step % 1000 == 0:
            model.eval()
            print("held out: " + report(torch_logits(model, tok, held), held), flush=True)
            model.train()


def torch_logits(model, tok, rows: list[dict]) -> np.ndarray:
    import torch

    out = []
    with torch.no_grad():
        for i in range(0, len(rows), 64):
            ids, mask, types = encode(tok, rows[i : i + 64])
            out.append(model(input_ids=ids, attention_mask=mask, token_type_ids=types).logits)
    return torch.cat(out).view(-1).numpy() if out else np.zeros(0)


def auc(scores: np.ndarray, labels: np.ndarray) -> float:
    pos, neg = scores[labels == 1], scores[labels == 0]
    if not len(pos) or not len(neg):
        return float("nan")
    ranks = np.argsort(np.argsort(np.concatenate([pos, neg]))) + 1
    return float((ranks[: len(pos)].sum() - len(pos) * (len(pos) + 1) / 2) / (len(pos) * len(neg)))


def report(scores: np.ndarray, rows: list[dict]) -> str:
    labels = np.array([r["label"] for r in rows])
    accuracy = float(((scores >= 0) == (labels == 1)).mean()) if len(rows) else float("nan")
    return f"AUC {auc(scores, labels):.4f}  accuracy {accuracy:.4f}  ({len(rows)} pairs)"


def install(model, tok, held, args, source: Path, rows_count: int) -> None:
    """Export fp32 and int8, compare them with torch on the held-out pairs, install one."""
    import torch
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from rag.evaluation import CrossEncoder

    work = REPO / "bench" / "out" / args.name / "export"
    work.mkdir(parents=True, exist_ok=True)
    fp32, int8 = work / "model-fp32.onnx", work / "model-int8.onnx"
    ids, mask, types = encode(tok, held[:4] or [{"query": "a", "evidence": "b"}])

    class Logits(torch.nn.Module):  # the graph's one output, whatever the model returns
        def __init__(self) -> None:
            super().__init__()
            self.model = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.model(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            ).logits

    torch.onnx.export(
        Logits(),
        (ids, mask, types),
        str(fp32),
        input_names=["input_ids", "attention_mask", "token_type_ids"],
        output_names=["logits"],
        dynamic_axes={
            n: {0: "batch", 1: "tokens"} for n in ("input_ids", "attention_mask", "token_type_ids")
        }
        | {"logits": {0: "batch"}},
        opset_version=17,
        dynamo=False,
    )
    quantize_dynamic(str(fp32), str(int8), weight_type=QuantType.QInt8, per_channel=True)
    shutil.copy(source / "tokenizer.json", work / "tokenizer.json")
    reference = torch_logits(model, tok, held)
    print("torch: " + report(reference, held), flush=True)
    scores = {}
    for precision, path in (("fp32", fp32), ("int8", int8)):
        folder = work / precision
        folder.mkdir(exist_ok=True)
        shutil.copy(path, folder / "model.onnx")
        shutil.copy(work / "tokenizer.json", folder / "tokenizer.json")
        _write_manifest(folder, args, precision, rows_count, {})
        found = CrossEncoder(args.name, folder).logits([(r["query"], r["evidence"]) for r in held])
        scores[precision] = found
        diff = np.abs(found - reference).max()
        print(f"{precision}: {report(found, held)}  max |diff| to torch {diff:.4f}", flush=True)
    labels = np.array([r["label"] for r in held])
    chosen = (
        "int8" if auc(scores["int8"], labels) >= auc(scores["fp32"], labels) - 0.005 else "fp32"
    )
    target = MODELS / args.name
    old = _read_manifest(target)
    target.mkdir(parents=True, exist_ok=True)
    shutil.copy(work / chosen / "model.onnx", target / "model.onnx")
    shutil.copy(work / "tokenizer.json", target / "tokenizer.json")
    held_auc = auc(scores[chosen], labels)
    _write_manifest(target, args, chosen, rows_count, old.get("thresholds", {}), held_auc)
    if "fusion_weight" in old:  # chosen by bench/fusion.py --tune-reranker; kept
        manifest = _read_manifest(target)
        (target / "manifest.json").write_text(
            json.dumps({**manifest, "fusion_weight": old["fusion_weight"]}, indent=1) + "\n"
        )
    print(f"installed {chosen} in {target.relative_to(REPO)} "
          f"({(target / 'model.onnx').stat().st_size / 1e6:.1f} MB)", flush=True)  # fmt: skip


def _read_manifest(folder: Path) -> dict:
    try:
        return json.loads((folder / "manifest.json").read_text())
    except (OSError, ValueError):
        return {}


def _write_manifest(folder: Path, args, precision: str, rows: int, thresholds: dict,
                    held_auc: float | None = None) -> None:  # fmt: skip
    manifest = {
        "name": args.name,
        "model": "model.onnx",
        "precision": precision,
        "base": "sentence-transformers/all-MiniLM-L6-v2",
        "layers": args.layers,
        "pooling": args.pooling,
        "max_length": args.max_length,
        "trained_on": f"{rows} pairs from bench/out/{args.name}/pairs.jsonl",
        "epochs": args.epochs,
        "cap": args.cap,
        "held_out_auc": held_auc,
        "rebuild": f"python bench/{args.name}_data.py && python bench/train_crossencoder.py "
        + " ".join(sys.argv[1:]),
        "thresholds": thresholds,
        "sha256": {f: file_sha256(folder / f) for f in ("model.onnx", "tokenizer.json")},
    }
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())
