"""Real servers for tests, started on loopback and stopped afterwards (the free port and
the wait for an answer are the benchmarks' own: ``bench._servers``)."""

from __future__ import annotations

import contextlib
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from bench._servers import free_port, wait_for_http


@contextlib.contextmanager
def llama_server(model: Path, api_key: str | None = None) -> Iterator[str]:
    """llama-cpp-python's OpenAI-compatible server; yields its base URL (…/v1)."""
    port = free_port()
    cmd = [sys.executable, "-m", "llama_cpp.server", "--model", str(model)]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048"]
    if api_key:
        cmd += ["--api_key", api_key]
    env = {**os.environ, "NO_PROXY": "127.0.0.1,localhost"}
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/v1/models", proc)
        yield f"http://127.0.0.1:{port}/v1"
    finally:
        proc.terminate()
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
