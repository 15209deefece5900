"""Real servers for tests, started on loopback and stopped afterwards."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_http(url: str, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers, even if not 200 (e.g. 401 without a key)
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"no answer from {url} within {timeout:.0f}s")


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
