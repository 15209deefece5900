"""Servers the benchmarks start on loopback: a free port, waiting for one to answer, and a
real Chroma server (``chroma run``)."""

from __future__ import annotations

import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from types import TracebackType


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for_http(url: str, proc: subprocess.Popen, timeout: float = 120.0) -> None:
    """Return once ``url`` answers (any status); fail if ``proc`` exits or time runs out."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode} before answering {url}")
        try:
            with urllib.request.urlopen(url, timeout=2):
                return
        except urllib.error.HTTPError:
            return  # it answers, even if not 200
        except OSError:
            time.sleep(0.3)
    raise TimeoutError(f"no answer from {url} within {timeout:.0f}s")


class ChromaServer:
    """``chroma run --path PATH`` on 127.0.0.1, started and stopped by its owner."""

    def __init__(self, path: Path, port: int | None = None) -> None:
        self.path = Path(path)
        self.port = port or free_port()
        self.process: subprocess.Popen[bytes] | None = None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def log(self) -> Path:
        return self.path.with_name(self.path.name + ".log")

    def start(self, timeout: float = 60.0) -> ChromaServer:
        chroma = Path(sys.executable).with_name("chroma")
        self.path.mkdir(parents=True, exist_ok=True)
        with self.log.open("wb") as log:
            self.process = subprocess.Popen(
                [str(chroma), "run", "--path", str(self.path), "--host", "127.0.0.1"]
                + ["--port", str(self.port)],
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
            )
        try:
            wait_for_http(f"{self.url}/api/v2/heartbeat", self.process, timeout)
        except (RuntimeError, TimeoutError) as exc:
            self.stop()
            raise RuntimeError(f"{exc}; chroma run said: {self.log.read_text()[-2000:]}") from exc
        return self

    def stop(self) -> None:
        if self.process is None:
            return
        self.process.terminate()
        try:
            self.process.wait(timeout=15)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.process = None

    def __enter__(self) -> ChromaServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
