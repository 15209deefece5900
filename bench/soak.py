"""Ingest in a loop into the index a `rag serve` answers from, while clients keep asking.

    .venv/bin/python bench/soak.py --clients 4 --seconds 120 --batch 20
    .venv/bin/python bench/soak.py --store server
    .venv/bin/python bench/soak.py --clients 8 --seconds 600 --index bench/out/needle-index \
        --papers PAPERS.jsonl   # papers that index does not hold yet (e.g. SciFact's corpus)

Builds a fresh index of the bundled ICML 2026 abstracts (``--index``: a copy of that index
folder instead, such as the 23k needle index), starts `rag serve` on it (the
folder, or with ``--store server`` the folder served by `chroma run`) and, for
``--seconds``, runs ``--clients`` gradio clients calling the "ask" API (extractive backend)
while another process runs `rag ingest` over and over: each run adds the next ``--batch``
papers of ml_abstracts.jsonl, and every third one also edits the abstracts of the batch
before it (their chunks are replaced). After each ingest the server is asked for every new
or edited paper by its title. Prints the requests and errors (target: none), the papers the
server found after each ingest, and the server's resident memory over time: sampled every
``--sample`` seconds, with its growth after the first two minutes (target: at most 10%).
"""

from __future__ import annotations

import argparse
import itertools
import json
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from contextlib import ExitStack
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from _servers import ChromaServer
from _util import BIN, DATA, QUESTIONS, client, load_average, rag_serve, summary_ms, vm_mb

BUNDLED = Path(__file__).resolve().parent.parent / "rag" / "data" / "icml2026_abstracts.txt"
EDIT = " The code is released with this version."


@dataclass
class Asking:
    """What the clients saw."""

    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)
    stop: threading.Event = field(default_factory=threading.Event)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--store", choices=["embedded", "server"], default="embedded")
    parser.add_argument("--clients", type=int, default=4)
    parser.add_argument("--seconds", type=float, default=120)
    parser.add_argument("--batch", type=int, default=20, help="papers added per ingest")
    parser.add_argument("--papers", type=Path, default=DATA, help="where new papers come from")
    parser.add_argument("--index", type=Path, help="start from a copy of this index folder")
    parser.add_argument("--sample", type=float, default=10.0, help="seconds between samples")
    args = parser.parse_args(argv)

    work = Path(tempfile.mkdtemp(prefix="rag-soak-"))
    folder = work / "index"
    with ExitStack() as stack:
        stack.callback(shutil.rmtree, work, ignore_errors=True)
        store = ["--index-dir", str(folder)]
        if args.store == "server":
            store = ["--chroma-url", stack.enter_context(ChromaServer(folder)).url]
        if args.index:
            shutil.copytree(args.index, folder)
        else:
            _ingest(store, BUNDLED)
        url, server = stack.enter_context(rag_serve(store))
        client(url).predict("warm-up question", 5, None, None, "extractive", api_name="/ask")
        start_mb = vm_mb(server.pid, "VmRSS")
        print(f"rag serve ({args.store} store) at {url}; memory {start_mb:.0f} MiB")
        asking = Asking()
        memory: list[tuple[float, float]] = []
        sampler = threading.Thread(target=_sample, args=(server.pid, args.sample, asking, memory))
        sampler.start()
        threads = [
            threading.Thread(target=_ask_until_stopped, args=(url, asking, i))
            for i in range(args.clients)
        ]
        for t in threads:
            t.start()
        deadline = time.monotonic() + args.seconds
        ingests = _ingest_until(args, store, url, work, deadline, server.pid)
        asking.stop.set()
        for t in [*threads, sampler]:
            t.join()
        _report(args, asking, ingests, start_mb, server.pid)
        _report_memory(memory)
    return 0


def _ingest_until(
    args: argparse.Namespace, store: list[str], url: str, work: Path, deadline: float, pid: int
) -> list[tuple[int, int]]:
    """Ingest batch after batch until ``deadline``; (papers asked for, papers found) each."""
    papers = _papers(args.papers)
    ask = client(url)
    results: list[tuple[int, int]] = []
    previous: Path | None = None
    for n in itertools.count(1):
        if time.monotonic() >= deadline:
            break
        batch = [next(papers) for _ in range(args.batch)]
        source = _write(work / f"batch-{n:04d}.jsonl", batch)
        sources, edited = [source], []
        if n % 3 == 0 and previous is not None:  # edits: the old chunks go, the new ones come
            edited = [{**p, "abstract": p["abstract"] + EDIT} for p in _read(previous)]
            sources.append(_write(previous, edited))  # the same file: the same papers
        started = time.monotonic()
        summary = _ingest(store, *sources)
        took = time.monotonic() - started
        found = sum(_found(ask, p) for p in batch + edited)
        results.append((len(batch) + len(edited), found))
        print(
            f"ingest {n}: {summary} in {took:.1f}s; the server found {found} of "
            f"{len(batch) + len(edited)} new or edited papers; "
            f"server memory {vm_mb(pid, 'VmRSS'):.0f} MiB",
            flush=True,
        )
        previous = source
    return results


def _write(path: Path, papers: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(p) + "\n" for p in papers), encoding="utf-8")
    return path


def _read(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def _papers(path: Path) -> Any:
    """Papers from the list, one after another, each with its own id."""
    with path.open(encoding="utf-8") as f:
        for line in f:
            record = json.loads(line)
            yield {
                k: record[k] for k in ("id", "title", "abstract", "venue", "year") if k in record
            }


def _ingest(store: list[str], *sources: Path) -> str:
    """`rag ingest` in a process of its own; the counts it printed."""
    cmd = [str(BIN / "rag"), "ingest", *map(str, sources), *store]
    result = subprocess.run(cmd, capture_output=True, text=True)
    if result.returncode != 0:
        raise SystemExit(f"rag ingest failed: {result.stderr.strip()}")
    return result.stdout.split(": ", 1)[-1].split(" (")[0].strip()


def _found(ask: Any, paper: dict[str, Any]) -> bool:
    """Whether the server finds the paper, as it is now, when asked for its title."""
    reply = ask.predict(paper["title"], 5, None, None, "extractive", api_name="/ask")
    hits = {hit["paper"]["paper_id"]: hit["paper"]["abstract"] for hit in reply["hits"]}
    return paper["id"] in hits and hits[paper["id"]].endswith(EDIT) == paper["abstract"].endswith(
        EDIT
    )


def _ask_until_stopped(url: str, asking: Asking, offset: int) -> None:
    ask = client(url)
    questions = itertools.islice(itertools.cycle(QUESTIONS), offset * 7, None)
    while not asking.stop.is_set():
        question = next(questions)
        started = time.perf_counter()
        try:
            ask.predict(question, 5, None, None, "extractive", api_name="/ask")
            with asking.lock:
                asking.latencies.append(time.perf_counter() - started)
        except Exception as exc:  # a failed request is what this counts
            with asking.lock:
                asking.errors.append(f"{type(exc).__name__}: {exc}"[:200])


def _sample(pid: int, every: float, asking: Asking, memory: list[tuple[float, float]]) -> None:
    """The server's resident memory every ``every`` seconds until the clients stop."""
    started = time.monotonic()
    while Path(f"/proc/{pid}").exists():
        memory.append((time.monotonic() - started, vm_mb(pid, "VmRSS")))
        if asking.stop.wait(every):
            return


def _report_memory(memory: list[tuple[float, float]], settled: float = 120.0) -> None:
    """Resident memory once a minute, and its growth from the first two minutes to the end."""
    minutes = {int(t // 60): mb for t, mb in memory}
    print(
        "server memory (MiB) by minute: " + ", ".join(f"{m}:{mb:.0f}" for m, mb in minutes.items())
    )
    after = [mb for t, mb in memory if t >= settled]
    if len(after) >= 2:
        growth = (max(after) - after[0]) / after[0]
        print(
            f"after {settled:.0f}s: {after[0]:.0f} MiB, at most {max(after):.0f} MiB, at the end "
            f"{after[-1]:.0f} MiB: growth {growth:.1%} (target <= 10%)"
        )


def _report(
    args: argparse.Namespace,
    asking: Asking,
    ingests: list[tuple[int, int]],
    start_mb: float,
    pid: int,
) -> None:
    asked = sum(n for n, _ in ingests)
    found = sum(f for _, f in ingests)
    done = len(asking.latencies)
    print(
        f"{args.clients} clients for {args.seconds:.0f}s: {done + len(asking.errors)} requests, "
        f"{len(asking.errors)} errors"
        + (f" (first: {asking.errors[0]})" if asking.errors else "")
        + (f"; {summary_ms(asking.latencies)}" if done else "")
    )
    print(f"{len(ingests)} ingests: the server found {found} of {asked} new or edited papers")
    print(
        f"server memory: {start_mb:.0f} MiB at the start, {vm_mb(pid, 'VmRSS'):.0f} MiB at "
        f"the end, peak {vm_mb(pid):.0f} MiB; {load_average()}"
    )


if __name__ == "__main__":
    sys.exit(main())
