"""Helpers shared by the benchmarks: timing, percentiles, memory, the web chat as a server."""

from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from _servers import free_port, wait_for_http

from rag.settings import models_dir

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT.parent / "shared" / "data" / "ml_abstracts.jsonl"
TLDRS = ROOT.parent / "shared" / "bench" / "ml" / "tldr_known_item.jsonl"
BIN = Path(sys.executable).parent

# index snapshots apart from other runs'; the model files shared with every command's
os.environ.setdefault("RAG_MODELS_DIR", str(models_dir()))
os.environ.setdefault("RAG_CACHE_DIR", str(ROOT / ".cache" / "bench-rag"))
sys.path.insert(0, str(ROOT))  # eval/ as the working tree holds it

QUESTIONS = [
    "Which papers tackle model merging?",
    "graph neural networks for molecule property prediction",
    "regret bounds for Thompson sampling in linear bandits",
    "variational autoencoders with discrete latent variables",
    "How do generative adversarial networks avoid mode collapse?",
    "differentially private stochastic gradient descent",
    "meta-learning for few-shot image classification",
    "off-policy evaluation in reinforcement learning",
    "adversarial examples and certified robustness",
    "Gaussian process regression with sparse inducing points",
    "causal inference from observational data with hidden confounders",
    "neural architecture search with weight sharing",
    "optimal transport and the Wasserstein distance for generative models",
    "federated learning with non-IID client data",
    "Bayesian optimization of hyperparameters",
    "exploration bonuses for deep reinforcement learning with sparse rewards",
    "spectral clustering on graphs",
    "kernel methods for two-sample testing",
    "learning rate schedules and the generalization of SGD",
    "attention mechanisms for machine translation",
    "matrix completion with low-rank constraints",
    "online convex optimization with bandit feedback",
    "imitation learning from demonstrations",
    "normalizing flows for density estimation",
    "counterfactual explanations for classifiers",
    "knowledge distillation from large teacher networks",
    "active learning with uncertainty sampling",
    "policy gradient variance reduction",
    "topic models and latent Dirichlet allocation",
    "robotic grasping with deep learning",
    "ICML papers on submodular maximization",
    "NeurIPS 2016 papers about recurrent neural networks",
    "COLT papers on PAC learning sample complexity",
    "ICLR 2018 papers on generative adversarial networks",
    "AISTATS papers on Monte Carlo methods",
    "What is the lottery ticket hypothesis?",
    "Which methods compress neural networks by pruning?",
    "How can we learn disentangled representations?",
    "multi-armed bandits with delayed feedback",
    "contrastive self-supervised learning of visual representations",
    "graph convolutional networks for semi-supervised node classification",
    "stochastic variational inference for large datasets",
    "deep reinforcement learning for Atari games",
    "fairness constraints in classification",
    "learning to rank for information retrieval",
    "sparse coding and dictionary learning",
    "Hamiltonian Monte Carlo step size adaptation",
    "word embeddings and distributional semantics",
    "theoretical analysis of overparameterized neural networks",
    "batch normalization and training stability",
]


def questions(n: int = 100) -> list[str]:
    """The hand-written questions (some with venue and year), then authors' TL;DRs."""
    tldrs = [json.loads(line)["query"] for line in TLDRS.read_text().splitlines()]
    step = max(1, len(tldrs) // max(1, n - len(QUESTIONS)))
    return (QUESTIONS + tldrs[::step])[:n]


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100), interpolated; NaN for no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    low = int(pos)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (pos - low)


def summary_ms(values: list[float]) -> str:
    """p50/p95/max of durations in seconds, printed in milliseconds."""
    return (
        f"p50 {percentile(values, 50) * 1000:.1f} ms, p95 {percentile(values, 95) * 1000:.1f} ms, "
        f"max {max(values) * 1000:.1f} ms (n={len(values)})"
    )


def median(values: list[float]) -> float:
    return statistics.median(values)


def peak_rss_mb(children: bool = False) -> float:
    """Peak resident memory of this process (or of its finished children), in MiB."""
    who = resource.RUSAGE_CHILDREN if children else resource.RUSAGE_SELF
    return resource.getrusage(who).ru_maxrss / 1024  # KiB on Linux


@contextmanager
def timed(label: str, results: dict[str, float]) -> Iterator[None]:
    started = time.perf_counter()
    yield
    results[label] = time.perf_counter() - started


@contextmanager
def rag_serve(store: list[str]) -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """`rag serve --llm extractive` over the index ``store`` names, on a free loopback port;
    yields its URL and process. Its log is printed if it fails to start."""
    port = free_port()
    log = tempfile.NamedTemporaryFile(prefix="rag-serve-", suffix=".log", delete=False)
    cmd = [str(BIN / "rag"), "serve", *store, "--port", str(port), "--llm", "extractive"]
    server = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_for_http(url + "/", server, timeout=300)
        yield url, server
    except Exception:
        print(Path(log.name).read_text()[-3000:], file=sys.stderr)
        raise
    finally:
        server.terminate()
        server.wait(30)


def client(url: str):  # type: ignore[no-untyped-def]
    """A gradio client for the web chat at ``url``."""
    from gradio_client import Client

    return Client(url, verbose=False)


def vm_mb(pid: int, field: str = "VmHWM") -> float:
    """A process's memory from /proc (VmHWM: peak resident, VmRSS: resident now), in MiB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(f"{field}:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def load_average() -> str:
    one, five, _ = os.getloadavg()
    return f"load average {one:.1f}/{five:.1f} on {os.cpu_count()} CPUs"
