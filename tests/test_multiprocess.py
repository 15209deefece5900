"""Several serving processes on one Chroma server stay consistent without restarts."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from rag.assistant import Assistant
from rag.index.embedder import Embedder
from rag.index.lexical import tokenize
from rag.index.snapshot import _cache_path, _read_cache, build_corpus, load_corpus
from rag.index.store import WRITING, PaperStore, StoredChunk
from rag.settings import Settings

from .chroma_server import ChromaServer, chroma_server  # noqa: F401 - the session fixture

# A serving process: one Assistant, driven by JSON lines on stdin, answering on stdout.
WORKER = """
import json, sys
from rag import Assistant
a = Assistant.open(chroma_url=sys.argv[1], llm="extractive", **{"store.collection": sys.argv[2]})
for line in sys.stdin:
    cmd = json.loads(line)
    if cmd["op"] == "ingest":
        r = a.ingest(cmd["paths"])
        out = {"added": r.added, "unchanged": r.unchanged}
    else:
        hits = a.search(cmd["question"], 3, mode=cmd["mode"], parse=False)
        out = {"ids": [h.paper.paper_id for h in hits]}
    print(json.dumps(out), flush=True)
"""

FIRST = [
    {
        "id": "bandits",
        "title": "Thompson Sampling for Linear Bandits",
        "abstract": "We bound the regret of Thompson sampling for linear contextual bandits.",
    },
    {
        "id": "molecules",
        "title": "Message Passing for Molecules",
        "abstract": "Graph neural networks predict quantum properties of molecules from bonds.",
    },
]
NEW = {
    "id": "surface-codes",
    "title": "Decoding Surface Codes with Neural Networks",
    "abstract": "Quantum error correction with surface codes needs fast decoders; a small "
    "convolutional network decodes syndromes at threshold.",
}
QUESTION = "neural decoders for quantum error correction with surface codes"


class Worker:
    """A separate Python process serving one Assistant."""

    def __init__(self, url: str, collection: str, cache: Path) -> None:
        env = {**os.environ, "RAG_CACHE_DIR": str(cache)}
        self.process = subprocess.Popen(
            [sys.executable, "-c", WORKER, url, collection],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env=env,
        )

    def __call__(self, **cmd: Any) -> dict[str, Any]:
        assert self.process.stdin and self.process.stdout
        self.process.stdin.write(json.dumps(cmd) + "\n")
        self.process.stdin.flush()
        line = self.process.stdout.readline()
        assert line, f"the worker died (exit code {self.process.poll()})"
        return dict(json.loads(line))

    def close(self) -> None:
        if self.process.stdin:
            self.process.stdin.close()
        self.process.wait(timeout=30)


def write_jsonl(path: Path, records: list[dict]) -> str:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return str(path)


def ingested(server: ChromaServer, embedder: Embedder, papers: str) -> Assistant:
    """An assistant over a new collection of the server, holding the papers."""
    settings = Settings().with_overrides(
        **{"store.chroma_url": server.url, "store.collection": f"c-{uuid.uuid4().hex[:8]}"}
    )
    assistant = Assistant(settings, PaperStore(settings.store), embedder)
    assistant.ingest([papers])
    return assistant


@pytest.mark.slow
def test_a_paper_ingested_by_one_process_is_found_by_another(
    chroma_server: ChromaServer,  # noqa: F811
    tmp_path: Path,
) -> None:
    collection, cache = f"mp-{uuid.uuid4().hex[:12]}", tmp_path / "cache"
    writer = Worker(chroma_server.url, collection, cache)
    reader = Worker(chroma_server.url, collection, cache)
    try:
        assert writer(op="ingest", paths=[write_jsonl(tmp_path / "a.jsonl", FIRST)])["added"] == 2
        for mode in ("bm25", "dense"):
            assert "surface-codes" not in reader(op="search", question=QUESTION, mode=mode)["ids"]
        assert writer(op="ingest", paths=[write_jsonl(tmp_path / "b.jsonl", [NEW])])["added"] == 1
        for mode in ("bm25", "dense", "hybrid"):
            found = reader(op="search", question=QUESTION, mode=mode)["ids"]
            assert found[0] == "surface-codes", mode
    finally:
        writer.close()
        reader.close()
    # a fresh process starts from the disk cache the reader wrote, which is current
    fresh = Worker(chroma_server.url, collection, cache)
    try:
        assert fresh(op="search", question=QUESTION, mode="bm25")["ids"][0] == "surface-codes"
    finally:
        fresh.close()


def test_a_snapshot_read_during_a_write_is_not_cached_for_other_processes(
    chroma_server: ChromaServer,  # noqa: F811
    tmp_path: Path,
    embedder: Embedder,
) -> None:
    assistant = ingested(chroma_server, embedder, write_jsonl(tmp_path / "a.jsonl", FIRST))
    settings = assistant.settings
    store = PaperStore(settings.store)  # a writer that starts but has not finished
    store.bump_version()
    during = store.version()
    assert during.startswith(WRITING)
    assert len(load_corpus(store).papers) == 2  # readers still get the index as it is...
    assert not (_cache_path(store) / during).exists()  # ...but nobody else will reuse it
    assistant.ingest([write_jsonl(tmp_path / "b.jsonl", [*FIRST, NEW])])  # another one ends
    after = store.version()
    assert not after.startswith(WRITING)
    assert len(load_corpus(store).papers) == 3
    assert (_cache_path(store) / after).is_dir()


def test_a_snapshot_whose_index_changed_while_it_was_read_is_not_cached(
    chroma_server: ChromaServer,  # noqa: F811
    tmp_path: Path,
    embedder: Embedder,
) -> None:
    settings = ingested(chroma_server, embedder, write_jsonl(tmp_path / "a.jsonl", FIRST)).settings
    other_process = PaperStore(settings.store)

    class WrittenMeanwhile(PaperStore):
        def iter_chunks(
            self, with_documents: bool = True, with_vectors: bool = False
        ) -> Iterator[StoredChunk]:
            yield from super().iter_chunks(with_documents, with_vectors)
            other_process.bump_version()  # a write elsewhere, while this one read

    store = WrittenMeanwhile(settings.store)
    read_at = store.version()
    shutil.rmtree(_cache_path(store))  # the ingest published it: read it from the index
    assert len(load_corpus(store, read_at).papers) == 2
    assert store.version() != read_at
    assert not (_cache_path(store) / read_at).exists()


def test_the_disk_cache_gives_back_the_snapshot_it_was_given(
    chroma_server: ChromaServer,  # noqa: F811
    tmp_path: Path,
    embedder: Embedder,
) -> None:
    import bm25s

    papers = write_jsonl(tmp_path / "a.jsonl", [*FIRST, NEW])
    settings = ingested(chroma_server, embedder, papers).settings
    store = PaperStore(settings.store)
    built = build_corpus(store, store.version())
    load_corpus(store)  # caches it
    cached = _read_cache(_cache_path(store) / built.version, built.version)
    assert cached is not None and cached.papers == built.papers
    assert (cached.chunk_ids, cached.chunk_texts) == (built.chunk_ids, built.chunk_texts)
    stored = {c.chunk_id: c.vector for c in store.iter_chunks(False, with_vectors=True)}
    assert np.array_equal(cached.vectors, np.stack([stored[c] for c in cached.chunk_ids]))
    reference = bm25s.BM25()  # what bm25s itself scores
    reference.index(
        [
            tokenize(f"{cached.papers[p].title}. {t}")
            for p, t in zip(cached.chunk_papers, cached.chunk_texts, strict=True)
        ],
        show_progress=False,
    )
    for question in (QUESTION, "graph neural networks for molecules", "bandits"):
        words = tokenize(question)
        scores = cached.bm25.scores(words)
        assert scores is not None and np.array_equal(scores, built.bm25.scores(words))
        known = [w for w in words if w in reference.vocab_dict]
        assert np.array_equal(scores, reference.get_scores(known))


def test_a_snapshot_left_half_written_by_a_killed_process_is_swept(
    chroma_server: ChromaServer,  # noqa: F811
    tmp_path: Path,
    embedder: Embedder,
) -> None:
    assistant = ingested(chroma_server, embedder, write_jsonl(tmp_path / "a.jsonl", FIRST))
    store = PaperStore(assistant.settings.store)
    folder = _cache_path(store)
    abandoned, writing = folder / ".tmp-killed", folder / ".tmp-writing"
    for partial in (abandoned, writing):
        partial.mkdir(parents=True)
        (partial / "bm25_data.npy").write_bytes(b"partial")
    two_hours_ago = time.time() - 7200
    os.utime(abandoned, (two_hours_ago, two_hours_ago))
    assistant.ingest([write_jsonl(tmp_path / "b.jsonl", [*FIRST, NEW])])  # a new version
    assert len(load_corpus(store).papers) == 3  # ...cached by this reader
    assert not abandoned.exists()
    assert writing.exists()  # another process may still be writing it
