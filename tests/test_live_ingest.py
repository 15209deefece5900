"""A serving process keeps answering, and finds the new papers, while another process ingests
into its index: on an embedded folder as on a Chroma server."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest

from rag.assistant import Assistant
from rag.index.embedder import Embedder
from rag.index.store import PaperStore
from rag.settings import Settings

from .chroma_server import ChromaServer, chroma_server  # noqa: F401 - the session fixture
from .servers import free_port, wait_for_http
from .test_multiprocess import FIRST  # the same two papers to start from

ROOT = Path(__file__).parent.parent

NEW = {
    "id": "surface-codes",
    "title": "Decoding Surface Codes with Neural Networks",
    "abstract": "Quantum error correction with surface codes needs fast decoders. A small "
    "convolutional network decodes syndromes at the threshold of the code.",
}
EDITED = {
    **NEW,
    "abstract": "Quantum error correction with surface codes needs fast decoders. A graph "
    "transformer decodes syndromes of circuit-level noise faster than matching.",
}
QUESTION = "neural decoders for quantum error correction with surface codes"


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def rag_cli(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """The ``rag`` command in a process of its own."""
    cmd = [sys.executable, "-m", "rag.cli", *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=600)


@dataclass
class Index:
    """An index as the ``rag`` command names it (options and environment) and as settings do."""

    args: list[str]
    env: dict[str, str]
    settings: Settings

    def ingest(self, source: Path, *options: str) -> str:
        """``rag ingest`` in another process; its summary line."""
        result = rag_cli("ingest", str(source), *self.args, *options, env=self.env)
        assert result.returncode == 0, result.stderr
        return result.stdout

    def serving(self, embedder: Embedder) -> Assistant:
        """The assistant a server process holds."""
        return Assistant(self.settings, PaperStore(self.settings.store), embedder)


@pytest.fixture(params=["embedded", "server"])
def index(
    request: pytest.FixtureRequest,
    tmp_path: Path,
    chroma_server: ChromaServer,  # noqa: F811
) -> Index:
    """A new index: a folder, or a collection on the Chroma server."""
    answering = {"llm.backend": "extractive"}
    if request.param == "embedded":
        folder = str(tmp_path / "index")
        overrides = {"store.index_dir": folder, **answering}
        return Index(["--index-dir", folder], {}, Settings().with_overrides(**overrides))
    collection = f"live-{uuid.uuid4().hex[:8]}"
    overrides = {"store.chroma_url": chroma_server.url, "store.collection": collection}
    return Index(
        ["--chroma-url", chroma_server.url],
        {"RAG_STORE__COLLECTION": collection},
        Settings().with_overrides(**overrides, **answering),
    )


def test_a_serving_assistant_finds_what_another_process_ingests(
    index: Index, tmp_path: Path, embedder: Embedder
) -> None:
    index.ingest(write_jsonl(tmp_path / "first.jsonl", FIRST))
    server = index.serving(embedder)
    for mode in ("bm25", "dense", "hybrid"):  # the server has loaded everything it searches
        hits = server.search(QUESTION, 3, mode=mode)
        assert "surface-codes" not in [h.paper.paper_id for h in hits]
    assert server.ask("regret of Thompson sampling for bandits").grounded

    assert "1 added" in index.ingest(write_jsonl(tmp_path / "new.jsonl", [NEW]))
    for mode in ("bm25", "dense", "hybrid"):
        assert server.search(QUESTION, 3, mode=mode)[0].paper.paper_id == "surface-codes", mode
    answer = server.ask(QUESTION)  # what it answers from: the new paper
    assert answer.grounded and answer.hits[0].paper.paper_id == "surface-codes"
    assert server.stats().papers == 3

    # an edit replaces the paper's chunks, and --prune takes papers out: both seen at once
    source = write_jsonl(tmp_path / "new.jsonl", [EDITED])
    assert "1 updated" in index.ingest(source, "--prune")
    for mode in ("bm25", "dense", "hybrid"):
        hits = server.search("graph transformer decoder for circuit-level noise", 3, mode=mode)
        assert [h.paper.paper_id for h in hits] == ["surface-codes"], mode
        assert "graph transformer" in hits[0].paper.abstract
    assert server.stats().papers == 1


@pytest.mark.slow
def test_rag_serve_answers_through_an_outside_ingest(tmp_path: Path) -> None:
    from gradio_client import Client

    index = ["--index-dir", str(tmp_path / "index")]
    assert rag_cli("ingest", str(write_jsonl(tmp_path / "a.jsonl", FIRST)), *index).returncode == 0
    port = free_port()
    log = (tmp_path / "serve.log").open("w")
    cmd = [sys.executable, "-m", "rag.cli", "serve", *index, "--llm", "extractive"]
    server = subprocess.Popen([*cmd, "--port", str(port)], cwd=ROOT, stdout=log, stderr=log)
    try:
        wait_for_http(f"http://127.0.0.1:{port}/", server, timeout=300)
        client = Client(f"http://127.0.0.1:{port}/", verbose=False)

        def ask() -> list[str]:
            reply = client.predict(QUESTION, 3, None, None, "extractive", api_name="/ask")
            return [hit["paper"]["paper_id"] for hit in reply["hits"]]

        assert "surface-codes" not in ask()
        added = rag_cli("ingest", str(write_jsonl(tmp_path / "b.jsonl", [NEW])), *index)
        assert added.returncode == 0, added.stderr
        for _ in range(3):
            assert ask()[:1] == ["surface-codes"]
    finally:
        server.terminate()
        server.wait(30)
        log.close()
    assert "Traceback" not in (tmp_path / "serve.log").read_text()


READ_ONLY = [["stats"], ["search", "bandits"], ["ask", "bandits", "--llm", "extractive"]]


@pytest.mark.parametrize("command", READ_ONLY, ids=lambda c: c[0])
def test_a_read_only_command_creates_no_index(tmp_path: Path, command: list[str]) -> None:
    result = rag_cli(*command, cwd=tmp_path)
    assert result.returncode == 1
    assert result.stderr.strip() == (
        "error: No index in index_store/. Run `rag ingest PATH` first."
    )
    assert list(tmp_path.iterdir()) == []


def test_a_reader_never_opens_chroma_while_another_process_ingests(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """While an ingest writes (and until it has published its snapshot) a reader answers from
    the snapshot it holds instead of a Chroma client of its own, which would load the whole
    vector index into every serving process and write to the folder; it reads the new
    snapshot once, when it is published."""
    from rag.index import snapshot

    reads: list[str] = []
    read_cache = snapshot._read_cache

    def counted(path: Path, version: str) -> snapshot.Corpus | None:
        corpus = read_cache(path, version)
        if corpus is not None:
            reads.append(version)
        return corpus

    folder = tmp_path / "index"
    settings = Settings().with_overrides(**{"store.index_dir": str(folder)})
    rag_cli("ingest", str(write_jsonl(tmp_path / "first.jsonl", FIRST)), "--index-dir", str(folder))
    reader = Assistant(settings, PaperStore(settings.store), embedder)
    reader.search(QUESTION, 3)
    monkeypatch.setattr(snapshot, "_read_cache", counted)
    more = [
        {**NEW, "id": f"paper-{i}", "title": f"{NEW['title']} {i}",
         "abstract": f"{NEW['abstract']} Variant {i} stacks {i + 2} layers."}
        for i in range(40)
    ]  # fmt: skip
    cmd = [
        sys.executable,
        "-m",
        "rag.cli",
        "ingest",
        str(write_jsonl(tmp_path / "more.jsonl", more)),
    ]
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    writer = subprocess.Popen([*cmd, "--index-dir", str(folder)], cwd=ROOT, env=env)
    searches = 0
    while writer.poll() is None:
        reader.search(QUESTION, 3)
        searches += 1
    assert writer.returncode == 0 and searches > 0
    assert reader.store._conn is None  # no Chroma client was made in the reader
    hits = reader.search(QUESTION, 3)
    assert hits[0].paper.paper_id.startswith("paper-")
    assert len(reader.retriever.corpus.papers) == 42
    assert reads == [reader.retriever.corpus.version]  # the new snapshot, once


def test_an_ingest_publishes_its_snapshot_before_readers_see_its_stamp(
    tmp_path: Path, embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last version stamp of an ingest names a snapshot that is already in the folder, so
    a reader never meets a finished version it would have to build through Chroma."""
    from rag.index import snapshot
    from rag.index.store import WRITING
    from rag.ingest.pipeline import ingest

    folder = tmp_path / "index"
    settings = Settings().with_overrides(**{"store.index_dir": str(folder)})
    store = PaperStore(settings.store)
    stamped: list[tuple[str, bool]] = []
    bump = PaperStore.bump_version

    def recorded(self: PaperStore, *stamp: str) -> None:
        bump(self, *stamp)
        version = self.version()
        published = folder / snapshot.SNAPSHOT_DIR / version / snapshot._DATA
        stamped.append((version, published.is_file()))

    monkeypatch.setattr(PaperStore, "bump_version", recorded)
    for name, papers in [("first", FIRST), ("new", [NEW]), ("new", [EDITED])]:
        ingest([write_jsonl(tmp_path / f"{name}.jsonl", papers)], store, embedder)
    finished = [(v, there) for v, there in stamped if not v.startswith(WRITING)]
    assert len(finished) == 3 and all(there for _, there in finished)
    reader = Assistant(settings, PaperStore(settings.store), embedder)
    assert "graph transformer" in reader.search(QUESTION, 1)[0].paper.abstract
    assert reader.store._conn is None  # read from the published snapshot, not Chroma
