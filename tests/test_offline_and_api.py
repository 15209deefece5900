"""The public facade, and a full ingest + query with no network at all."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import rag

ROOT = Path(__file__).parent.parent


def test_facade_exports_are_sorted_and_complete() -> None:
    assert rag.__all__ == sorted(rag.__all__)
    public = {n for n in vars(rag) if not n.startswith("_") and n[0].isupper()}
    assert public <= set(rag.__all__)
    for name in rag.__all__:
        assert getattr(rag, name).__module__.startswith("rag.")
    for name in ("Assistant", "Answer", "Citation", "Hit", "Paper", "RagError"):
        assert name in rag.__all__


def _can_unshare() -> bool:
    if not shutil.which("unshare"):
        return False
    return subprocess.run(["unshare", "-n", "true"], capture_output=True).returncode == 0


@pytest.mark.skipif(not _can_unshare(), reason="needs unshare -n (root or user namespaces)")
def test_ingest_and_answer_inside_a_namespace_without_network(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HF_", "TRANSFORMERS_"))}
    env["RAG_CACHE_DIR"] = str(tmp_path / "cache")
    rag_cli = [sys.executable, "-m", "rag.cli"]
    index = ["--index-dir", str(tmp_path / "idx")]

    def offline(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = ["unshare", "-n", *rag_cli, *args, *index]
        return subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, env=env, timeout=600)

    assert subprocess.run(["unshare", "-n", "getent", "hosts", "pypi.org"]).returncode != 0
    ingest = offline("ingest", "--bundled")
    assert ingest.returncode == 0, ingest.stderr
    assert "19 added" in ingest.stdout
    answer = offline("ask", "--llm", "extractive", "Which paper tackles model merging?")
    assert answer.returncode == 0, answer.stderr
    assert "OPIC" in answer.stdout and "[1]" in answer.stdout
