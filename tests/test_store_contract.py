"""The store contract, run over an embedded Chroma (a folder) and a real `chroma run` server."""

from __future__ import annotations

import json
import re
import signal
import socket
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import pytest

from rag.assistant import Assistant
from rag.errors import ConfigError, EmbedderMismatchError, NoIndexError
from rag.index.embedder import Embedder
from rag.index.store import WRITING, PaperStore
from rag.settings import EmbedderSettings, Settings

from .chroma_server import ChromaServer, TokenProxy, chroma_server  # noqa: F401 - fixture
from .conftest import BUNDLED
from .servers import free_port

MakeAssistant = Callable[..., Assistant]

RECORDS = [
    {
        "id": "colt-thompson",
        "venue": "COLT",
        "year": 2017,
        "title": "Regret of Thompson Sampling in Linear Bandits",
        "abstract": "We bound the frequentist regret of Thompson sampling for linear "
        "contextual bandits. The bound matches the best known rates up to logarithmic factors.",
    },
    {
        "id": "icml-molecules",
        "venue": "ICML",
        "year": 2019,
        "title": "Message Passing Networks for Molecules",
        "abstract": "Graph neural networks predict quantum chemical properties of molecules "
        "from their bond graphs. Message passing over atoms beats hand-made descriptors.",
    },
    {
        "id": "neurips-gan",
        "venue": "NeurIPS",
        "year": 2016,
        "title": "Stabilising Generative Adversarial Networks",
        "abstract": "Generative adversarial networks often collapse to a few modes. We add a "
        "minibatch discrimination term that keeps the generated images diverse.",
    },
    {
        "id": "iclr-pruning",
        "venue": "ICLR",
        "year": 2019,
        "title": "Sparse Subnetworks Found by Iterative Magnitude Pruning",
        "abstract": "Dense networks contain sparse subnetworks that train to full accuracy "
        "from their original initialisation. Iterative magnitude pruning finds them.",
    },
    {
        "id": "uai-causal",
        "venue": "UAI",
        "year": 2019,
        "title": "Causal Discovery with Hidden Confounders",
        "abstract": "We learn causal graphs from observational data when some confounders are "
        "never observed, using conditional independence tests and ancestral graphs.",
    },
    {
        "id": "colt-pac",
        "venue": "COLT",
        "year": 2019,
        "title": "Sample Complexity of PAC Learning Halfspaces",
        "abstract": "We give tight sample complexity bounds for PAC learning halfspaces with "
        "Massart noise, and an efficient algorithm that attains them.",
    },
]

QUESTIONS = {
    "regret of Thompson sampling for contextual bandits": "colt-thompson",
    "graph networks that predict properties of molecules": "icml-molecules",
    "mode collapse in GANs": "neurips-gan",
    "lottery tickets: sparse subnetworks from pruning": "iclr-pruning",
    "causal structure learning with unobserved confounding": "uai-causal",
}


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


@pytest.fixture(params=["embedded", "server"])
def make(request: pytest.FixtureRequest, tmp_path: Path, embedder: Embedder) -> MakeAssistant:
    """Assistants on one fresh index: a folder, or a new collection on the Chroma server."""
    if request.param == "server":
        server: ChromaServer = request.getfixturevalue("chroma_server")
        where = {"store.chroma_url": server.url, "store.collection": f"t-{uuid.uuid4().hex[:12]}"}
    else:
        where = {"store.index_dir": tmp_path / "index"}

    def make(with_embedder: Embedder = embedder) -> Assistant:
        settings = Settings().with_overrides(**where, **{"llm.backend": "extractive"})
        return Assistant(settings, PaperStore(settings.store), with_embedder)

    return make


def test_ingested_papers_are_found_by_every_search_mode(make: MakeAssistant, tmp_path: Path):
    a = make()
    report = a.ingest([write_jsonl(tmp_path / "p.jsonl", RECORDS), BUNDLED])
    assert (report.added, report.duplicates, len(report.skipped)) == (len(RECORDS) + 19, 0, 0)
    assert a.stats().papers == len(RECORDS) + 19
    for mode in ("hybrid", "bm25", "dense"):
        for question, paper_id in QUESTIONS.items():
            hits = a.search(question, 3, mode=mode, parse=False)
            assert hits[0].paper.paper_id == paper_id, (mode, question)
    density = a.search("counterfactual explanations kept in high-density regions", 1)[0]
    assert density.paper.venue_year == "ICML 2026" and "DensityFlow" in density.paper.abstract


def test_reingesting_unchanged_papers_embeds_and_writes_nothing(
    make: MakeAssistant, tmp_path: Path
) -> None:
    a = make()
    source = write_jsonl(tmp_path / "p.jsonl", RECORDS)
    a.ingest([source])
    version = a.store.version()
    again = a.ingest([source])
    counts = (again.added, again.updated, again.unchanged, again.removed, again.chunks_written)
    assert counts == (0, 0, len(RECORDS), 0, 0)
    assert a.store.version() == version  # serving processes need not reload


def test_a_changed_abstract_replaces_the_old_one(make: MakeAssistant, tmp_path: Path) -> None:
    a = make()
    source = write_jsonl(tmp_path / "p.jsonl", RECORDS)
    a.ingest([source])
    edited = [dict(r) for r in RECORDS]
    edited[2]["abstract"] = "We train diffusion models for protein backbone design instead."
    report = a.ingest([write_jsonl(source, edited)])
    assert (report.added, report.updated, report.unchanged) == (0, 1, len(RECORDS) - 1)
    hit = a.search("diffusion models for protein design", 1, parse=False)[0]
    assert hit.paper.paper_id == "neurips-gan" and "protein" in hit.paper.abstract
    assert not any("minibatch discrimination" in t for t in a.retriever.corpus.chunk_texts)
    assert a.stats().papers == len(RECORDS)


def test_prune_removes_papers_gone_from_the_sources(make: MakeAssistant, tmp_path: Path) -> None:
    a = make()
    a.ingest([write_jsonl(tmp_path / "p.jsonl", RECORDS)])
    kept = write_jsonl(tmp_path / "p.jsonl", RECORDS[:4])
    assert a.ingest([kept]).removed == 0 and a.stats().papers == len(RECORDS)
    report = a.ingest([kept], prune=True)
    assert report.removed == 2 and a.stats().papers == 4
    assert a.store.count() == len(a.retriever.corpus.chunk_ids)
    ids = {h.paper.paper_id for h in a.search("causal discovery with hidden confounders", 10)}
    assert "uai-causal" not in ids and "colt-pac" not in ids


def test_another_chunking_is_refused_as_an_embedder_mismatch(
    make: MakeAssistant, tmp_path: Path
) -> None:
    source = write_jsonl(tmp_path / "p.jsonl", RECORDS)
    make().ingest([source])
    other = Embedder(EmbedderSettings(chunk_tokens=128))
    with pytest.raises(EmbedderMismatchError, match="chunk_tokens=256, not 128"):
        make(other).ingest([source])
    assert make().ingest([source]).unchanged == len(RECORDS)  # the index is untouched


def test_the_index_records_runtime_and_precision_and_refuses_another(
    make: MakeAssistant, tmp_path: Path
) -> None:
    source = write_jsonl(tmp_path / "p.jsonl", RECORDS)
    a = make()
    a.ingest([source])
    meta = a.store.metadata()
    assert (meta["embedder"], meta["runtime"], meta["precision"]) == (
        "sentence-transformers/all-MiniLM-L6-v2",
        "onnxruntime",
        "fp32",
    )
    int8 = make(Embedder(EmbedderSettings(precision="int8")))
    refused = "built with precision='fp32', not 'int8'. Rebuild it: `rag ingest --rebuild PATH`"
    for mode in ("hybrid", "dense"):
        with pytest.raises(EmbedderMismatchError, match=re.escape(refused)):
            int8.search("mode collapse in GANs", 3, mode=mode)
    with pytest.raises(EmbedderMismatchError, match="precision='fp32', not 'int8'"):
        int8.ask("What causes mode collapse in GANs?")
    with pytest.raises(EmbedderMismatchError, match="precision='fp32', not 'int8'"):
        int8.ingest([source])
    # words alone compare no vectors; the index is untouched
    assert int8.search("mode collapse in GANs", 1, mode="bm25")[0].paper.paper_id == "neurips-gan"
    assert make().ingest([source]).unchanged == len(RECORDS)


def test_an_index_of_sentence_transformers_vectors_keeps_working_in_fp32(
    make: MakeAssistant, tmp_path: Path, embedder: Embedder
) -> None:
    """Indexes built before the ONNX runtime (torch sentence-transformers, no runtime or
    precision recorded) are searched and extended with fp32, whose vectors are the same;
    int8 is refused with the rebuild command."""
    from sentence_transformers import SentenceTransformer

    source = write_jsonl(tmp_path / "p.jsonl", RECORDS)
    a = make()
    a.ingest([source])
    chunks = list(a.store.iter_chunks())  # as the old code wrote them:
    model = SentenceTransformer(embedder.path, device="cpu", local_files_only=True)
    texts = [f"{c.meta['title']}. {c.text}" for c in chunks]
    vectors = model.encode(texts, normalize_embeddings=True)
    a.store.upsert([c.chunk_id for c in chunks], vectors, texts, [c.meta for c in chunks])
    meta = a.store.metadata()
    a.store._modify({k: v for k, v in meta.items() if k not in ("runtime", "precision")})
    a.store.bump_version()

    legacy = make()
    for question, paper_id in QUESTIONS.items():
        hits = legacy.search(question, 3, mode="dense", parse=False)
        assert hits[0].paper.paper_id == paper_id, question
        vector = model.encode([question], normalize_embeddings=True)[0]
        stored = legacy.retriever.corpus.vectors[
            legacy.retriever.corpus.chunk_index[f"{paper_id}::0"]
        ]
        assert hits[0].dense_similarity == pytest.approx(float(stored @ vector), abs=1e-4)
    with pytest.raises(EmbedderMismatchError, match="runtime='sentence-transformers'.*--rebuild"):
        make(Embedder(EmbedderSettings(precision="int8"))).search("mode collapse in GANs")
    assert legacy.ingest([source]).unchanged == len(RECORDS)
    assert legacy.store.metadata()["runtime"] == "onnxruntime"  # recorded from now on


def test_venue_and_year_filters_hold_on_every_side(make: MakeAssistant, tmp_path: Path) -> None:
    a = make()
    a.ingest([write_jsonl(tmp_path / "p.jsonl", RECORDS)])
    for mode in ("hybrid", "bm25", "dense"):
        colt = a.search("learning bounds", 10, venue="colt", mode=mode, parse=False)
        assert colt and {h.paper.venue for h in colt} == {"COLT"}, mode
        y2019 = a.search("networks and graphs", 10, year=2019, mode=mode, parse=False)
        assert y2019 and {h.paper.year for h in y2019} == {2019}, mode
        both = a.search("learning", 10, venue="COLT", year=2019, mode=mode, parse=False)
        assert [h.paper.paper_id for h in both] == ["colt-pac"], mode
    assert a.search("mode collapse", 5, venue="COLT", year_max=2016, parse=False) == []
    # a filter named in the question works the same way
    assert {h.paper.venue for h in a.search("COLT papers on learning", 10)} == {"COLT"}


def test_an_empty_store_says_to_ingest(make: MakeAssistant) -> None:
    a = make()
    assert not a.store.exists()
    with pytest.raises(NoIndexError, match="rag ingest"):
        a.search("anything")


def test_every_write_gives_a_new_version_other_handles_see(
    make: MakeAssistant, tmp_path: Path
) -> None:
    writer, reader = make(), make()
    source = write_jsonl(tmp_path / "p.jsonl", RECORDS[:3])
    writer.ingest([source])
    assert len(reader.papers()) == 3
    before = reader.store.version()
    writer.ingest([write_jsonl(source, RECORDS)])
    after = reader.store.version()
    assert after != before and not after.startswith(WRITING)
    assert len(reader.papers()) == len(RECORDS)  # reloaded without a restart


def test_an_unreachable_server_is_a_config_error() -> None:
    settings = Settings().with_overrides(**{"store.chroma_url": f"http://127.0.0.1:{free_port()}"})
    with pytest.raises(ConfigError, match="Cannot reach the Chroma server"):
        PaperStore(settings.store)


def test_a_server_that_stops_is_a_config_error_not_a_crash(
    tmp_path: Path, embedder: Embedder
) -> None:
    with ChromaServer(tmp_path / "chroma") as server:
        settings = Settings().with_overrides(**{"store.chroma_url": server.url})
        store = PaperStore(settings.store)
        assert not store.exists()
    with pytest.raises(ConfigError, match="chroma run"):
        store.version()


def test_a_server_that_hangs_is_a_config_error_after_the_timeout(
    tmp_path: Path, embedder: Embedder
) -> None:
    with socket.create_server(("127.0.0.1", 0)) as silent:  # accepts, never answers
        url = f"http://127.0.0.1:{silent.getsockname()[1]}"
        settings = Settings().with_overrides(**{"store.chroma_url": url, "store.chroma_timeout": 1})
        started = time.monotonic()
        with pytest.raises(ConfigError, match="Cannot reach the Chroma server"):
            PaperStore(settings.store)
        assert time.monotonic() - started < 10
    with ChromaServer(tmp_path / "chroma") as server:  # and one that stops answering later
        settings = Settings().with_overrides(
            **{"store.chroma_url": server.url, "store.chroma_timeout": 1}
        )
        store = PaperStore(settings.store)
        assert not store.exists()
        assert server.process is not None
        server.process.send_signal(signal.SIGSTOP)
        try:
            _wait_stopped(server.process.pid)  # a loaded machine delivers the signal late
            started = time.monotonic()
            with pytest.raises(ConfigError, match="Cannot reach the Chroma server"):
                store.version()
            assert time.monotonic() - started < 10
        finally:
            server.process.send_signal(signal.SIGCONT)


def _wait_stopped(pid: int, seconds: float = 5.0) -> None:
    """Until every thread of the process is stopped (state T in /proc)."""
    deadline = time.monotonic() + seconds
    tasks = Path(f"/proc/{pid}/task")
    while time.monotonic() < deadline:
        states = [(t / "stat").read_text().rsplit(")", 1)[1].split()[0] for t in tasks.iterdir()]
        if all(state in "Tt" for state in states):
            return
        time.sleep(0.05)


def test_the_token_reaches_a_server_behind_an_auth_proxy(
    chroma_server: ChromaServer,  # noqa: F811
    tmp_path: Path,
    embedder: Embedder,
) -> None:
    with TokenProxy(chroma_server.port, "s3cret") as proxy:
        where = {"store.chroma_url": proxy.url, "store.collection": f"a-{uuid.uuid4().hex[:8]}"}
        settings = Settings().with_overrides(**where, **{"store.chroma_token": "s3cret"})
        a = Assistant(settings, PaperStore(settings.store), embedder)
        a.ingest([write_jsonl(tmp_path / "p.jsonl", RECORDS[:2])])
        assert a.search("Thompson sampling regret", 1)[0].paper.paper_id == "colt-thompson"
        for token in (None, "wrong"):
            refused = Settings().with_overrides(**where, **{"store.chroma_token": token})
            with pytest.raises(ConfigError, match="refused.*--chroma-token"):
                PaperStore(refused.store).version()
