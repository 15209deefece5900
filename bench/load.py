"""Concurrent clients against `rag serve` over loopback: throughput, latency, errors.

    .venv/bin/python bench/load.py --index-dir bench/out/needle-index
    .venv/bin/python bench/load.py --index-dir bench/out/needle-index --store server
    .venv/bin/python bench/load.py --index-dir bench/out/needle-index --llm-clients 2

Starts `rag serve` on a free port (the index as a folder, or, with ``--store server``,
the same folder served by `chroma run`), then for each client count runs that many
gradio_client clients calling the "ask" API (extractive backend) for ``--seconds``:
requests/s, p50/p95 latency, errors (target: none). ``--llm-clients N`` then runs N clients
on the local LLM for ``--llm-seconds``: the requests queue for the one model, none fail.
"""

from __future__ import annotations

import argparse
import itertools
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path

from _servers import ChromaServer
from _util import client as _client
from _util import load_average, questions, rag_serve, summary_ms, vm_mb


@dataclass
class Run:
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0  # from the first request until the last answer
    lock: threading.Lock = field(default_factory=threading.Lock)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--store", choices=["embedded", "server"], default="embedded")
    parser.add_argument("--clients", type=int, nargs="*", default=[4, 8])
    parser.add_argument("--seconds", type=float, default=30)
    parser.add_argument("--llm-clients", type=int, default=0)
    parser.add_argument("--llm-seconds", type=float, default=90)
    parser.add_argument("--questions", type=int, default=100, help="distinct questions asked")
    args = parser.parse_args(argv)

    qs = itertools.cycle(questions(args.questions))  # each run goes on where the last stopped
    with ExitStack() as stack:
        store = ["--index-dir", str(args.index_dir)]
        if args.store == "server":
            chroma = stack.enter_context(ChromaServer(args.index_dir))
            store = ["--chroma-url", chroma.url]
        url, server = stack.enter_context(rag_serve(store))
        started = time.perf_counter()
        _client(url).predict(
            "warm-up question on bandits", 5, None, None, "extractive", api_name="/ask"
        )
        first = time.perf_counter() - started
        print(f"rag serve ({args.store} store) at {url}; first answer {first:.1f}s")
        for n in args.clients:
            run = _load(url, n, args.seconds, "extractive", qs)
            _report(f"{n} clients, extractive", run)
        if args.llm_clients:
            run = _load(url, args.llm_clients, args.llm_seconds, "local", qs)
            _report(f"{args.llm_clients} clients, local LLM", run)
        print(f"server peak memory (VmHWM): {vm_mb(server.pid):.0f} MiB; {load_average()}")
    return 0


def _load(url: str, clients: int, seconds: float, backend: str, qs: Iterator[str]) -> Run:
    """``clients`` threads, each with its own client, asking until the time is up."""
    run = Run()
    ready, go = threading.Barrier(clients + 1), threading.Event()
    deadline = 0.0

    def worker() -> None:
        client = _client(url)
        ready.wait()
        go.wait()
        while time.perf_counter() < deadline:
            with run.lock:
                question = next(qs)
            started = time.perf_counter()
            try:
                client.predict(question, 5, None, None, backend, api_name="/ask")
                with run.lock:
                    run.latencies.append(time.perf_counter() - started)
            except Exception as exc:  # a failed request is what this counts
                with run.lock:
                    run.errors.append(f"{type(exc).__name__}: {exc}"[:200])

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    for t in threads:
        t.start()
    ready.wait()  # every client connected
    started = time.perf_counter()
    deadline = started + seconds
    go.set()
    for t in threads:
        t.join()
    run.seconds = time.perf_counter() - started
    return run


def _report(label: str, run: Run) -> None:
    done = len(run.latencies)
    print(
        f"{label}: {done} answered in {run.seconds:.0f}s = {done / run.seconds:.2f} req/s; "
        f"{summary_ms(run.latencies) if done else 'no answers'}; errors {len(run.errors)}"
        + (f" (first: {run.errors[0]})" if run.errors else ""),
        flush=True,
    )


if __name__ == "__main__":
    sys.exit(main())
