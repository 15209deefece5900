"""Ingestion into a real Chroma index with the real embedder: incremental, safe, complete."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rag.embedder import Embedder
from rag.errors import EmbedderMismatchError, InputError
from rag.settings import EmbedderSettings
from rag.store import PaperStore

from .conftest import BUNDLED, make_assistant

ROOT = Path(__file__).parent.parent


def write_jsonl(path: Path, records: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def papers(n: int, prefix: str = "p") -> list[dict]:
    topics = [
        "graph neural networks",
        "protein folding",
        "speech recognition",
        "bandits",
        "robotics",
    ]
    return [
        {
            "id": f"{prefix}{i}",
            "title": f"Paper {i} on {topics[i % len(topics)]}",
            "abstract": f"We study {topics[i % len(topics)]} in setting {i}. Our method number {i} "
            f"improves accuracy by {i}.5% over strong baselines on three benchmarks.",
            "venue": "TestConf",
            "year": 2020 + i % 3,
        }
        for i in range(n)
    ]


def snapshot(index_dir: Path, embedder: Embedder) -> dict[str, tuple]:
    """Everything in the collection: ids with their text and metadata, and its metadata."""
    store = PaperStore(make_assistant(index_dir, embedder).settings.store)
    if not store.exists():
        return {}
    chunks = {c.chunk_id: (c.text, tuple(sorted(c.meta.items()))) for c in store.iter_chunks()}
    return {
        "chunks": tuple(sorted(chunks.items())),
        "meta": tuple(sorted(store.metadata().items())),
    }


def test_bundled_corpus_is_indexed_with_venue_year_and_titles(bundled) -> None:
    stats = bundled.stats()
    assert stats.papers == 19 and stats.venues == {"ICML": 19} and stats.years == {2026: 19}
    assert stats.embedder == "sentence-transformers/all-MiniLM-L6-v2"
    titles = [p.title for p in bundled.papers()]
    assert len(set(titles)) == 19 and all(p.title_derived for p in bundled.papers())


def test_chunks_fit_the_embedder_window(bundled, embedder) -> None:
    corpus = bundled.retriever.corpus
    pairs = zip(corpus.chunk_papers, corpus.chunk_texts, strict=True)
    texts = [f"{corpus.papers[p].title}. {t}" for p, t in pairs]
    assert max(embedder.count_tokens(texts)) <= 256
    assert len(texts) > 19  # long abstracts were split, at sentence boundaries
    assert all(t.rstrip().endswith((".", ")", "}", "]")) for t in corpus.chunk_texts)


def test_reingest_is_a_noop_and_changes_update_in_place(tmp_path: Path, embedder) -> None:
    a = make_assistant(tmp_path / "idx", embedder)
    source = write_jsonl(tmp_path / "p.jsonl", papers(6))
    first = a.ingest([source])
    assert (first.added, first.unchanged) == (6, 0)
    before = snapshot(tmp_path / "idx", embedder)
    again = a.ingest([source])
    assert (again.added, again.updated, again.unchanged, again.chunks_written) == (0, 0, 6, 0)
    assert snapshot(tmp_path / "idx", embedder) == before

    changed = papers(6)
    changed[2]["abstract"] = "We study protein design with diffusion. A wholly new abstract."
    report = a.ingest([write_jsonl(source, changed)])
    assert (report.added, report.updated, report.unchanged) == (0, 1, 5)
    hit = a.search("protein design with diffusion", 1)[0]
    assert hit.paper.paper_id == "p2" and "wholly new" in hit.paper.abstract
    assert a.stats().papers == 6


def test_duplicates_across_files_are_one_paper(tmp_path: Path, embedder) -> None:
    a = make_assistant(tmp_path / "idx", embedder)
    records = papers(3)
    no_ids = [{k: v for k, v in r.items() if k != "id"} for r in records]
    report = a.ingest(
        [write_jsonl(tmp_path / "a.jsonl", records), write_jsonl(tmp_path / "b.jsonl", no_ids)]
    )
    assert (report.added, report.duplicates) == (3, 3)
    later = a.ingest([write_jsonl(tmp_path / "c.jsonl", no_ids[:2])])
    assert (later.added, later.duplicates) == (0, 2)
    assert a.stats().papers == 3


def test_prune_removes_papers_no_longer_in_the_sources(tmp_path: Path, embedder) -> None:
    a = make_assistant(tmp_path / "idx", embedder)
    a.ingest([write_jsonl(tmp_path / "p.jsonl", papers(5))])
    kept = write_jsonl(tmp_path / "p.jsonl", papers(3))
    assert a.ingest([kept]).removed == 0 and a.stats().papers == 5
    report = a.ingest([kept], prune=True)
    assert report.removed == 2 and a.stats().papers == 3
    assert {h.paper.paper_id for h in a.search("setting 4 bandits", 5)} <= {"p0", "p1", "p2"}


def test_edited_text_paragraph_replaces_its_old_version(tmp_path: Path, embedder) -> None:
    a = make_assistant(tmp_path / "idx", embedder)
    text = BUNDLED.read_text(encoding="utf-8").split("\n\n")
    source = tmp_path / "list.txt"
    source.write_text("\n\n".join(text[:4]), encoding="utf-8")
    a.ingest([source])
    text[3] = text[3].replace("CryoACE", "CryoACE-2")
    source.write_text("\n\n".join(text[:4]), encoding="utf-8")
    report = a.ingest([source])
    assert (report.added, report.updated, report.unchanged) == (0, 1, 2)
    assert a.stats().papers == 3


def test_another_embedder_setting_is_refused_with_a_rebuild_hint(tmp_path: Path, embedder) -> None:
    make_assistant(tmp_path / "idx", embedder).ingest(
        [write_jsonl(tmp_path / "p.jsonl", papers(2))]
    )
    other = Embedder(EmbedderSettings(chunk_tokens=128))
    with pytest.raises(EmbedderMismatchError, match="rag ingest --rebuild"):
        make_assistant(tmp_path / "idx", other).ingest([tmp_path / "p.jsonl"])
    rebuilt = make_assistant(tmp_path / "idx", other).ingest([tmp_path / "p.jsonl"], rebuild=True)
    assert rebuilt.added == 2


BAD_INPUTS = {
    "missing.jsonl": None,
    "empty.jsonl": "",
    "broken.json": '[{"title": "a", "abstract": "x y z"},\n {"title": "b" "abstract": "q"}]',
    "broken.jsonl": '{"abstract": "fine one here"}\n{"abstract": oops}\n',
    "no_abstract.jsonl": '{"title": "only a title"}\n',
    "latin1.csv": "title,abstract\nCaf\xe9,r\xe9sum\xe9 of things\n",
    "not_papers.csv": "name,age\nbob,3\n",
}


@pytest.mark.parametrize("name", sorted(BAD_INPUTS))
def test_bad_input_leaves_the_index_exactly_as_it_was(tmp_path: Path, embedder, name: str) -> None:
    a = make_assistant(tmp_path / "idx", embedder)
    a.ingest([write_jsonl(tmp_path / "good.jsonl", papers(3))])
    before = snapshot(tmp_path / "idx", embedder)
    bad = tmp_path / name
    content = BAD_INPUTS[name]
    if content is not None:
        bad.write_bytes(content.encode("latin-1") if name.endswith(".csv") else content.encode())
    # a good file alongside must not be half-ingested either
    extra = write_jsonl(tmp_path / "more.jsonl", papers(2, prefix="new"))
    with pytest.raises(InputError) as err:
        a.ingest([extra, bad], rebuild=name == "broken.json")
    assert name in str(err.value) and "\n" not in str(err.value)
    assert snapshot(tmp_path / "idx", embedder) == before


def test_cli_reports_bad_input_in_one_line_with_exit_1(tmp_path: Path) -> None:
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"abstract": "ok"}\n{"abstract": oops}\n')
    result = subprocess.run(
        [sys.executable, "-m", "rag.cli", "ingest", str(bad), "--index-dir", str(tmp_path / "i")],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert result.returncode == 1
    assert result.stderr.strip().count("\n") == 0
    assert "broken.jsonl:2" in result.stderr and "--skip-invalid" in result.stderr


def test_skip_invalid_counts_bad_records(tmp_path: Path, embedder) -> None:
    source = tmp_path / "mixed.jsonl"
    source.write_text(
        '{"title": "t", "abstract": "A fine abstract about bandits."}\n{"title": "no abstract"}\n'
    )
    report = make_assistant(tmp_path / "idx", embedder).ingest([source], skip_invalid=True)
    assert (
        report.added == 1 and len(report.skipped) == 1 and "mixed.jsonl:2" in report.skipped[0][0]
    )


def test_a_killed_ingest_leaves_an_index_that_a_rerun_completes(tmp_path: Path, embedder) -> None:
    source = write_jsonl(tmp_path / "many.jsonl", papers(1500))
    index_dir = tmp_path / "idx"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    cmd = [sys.executable, "-m", "rag.cli", "ingest", str(source), "--index-dir", str(index_dir)]
    proc = subprocess.Popen(cmd, cwd=ROOT, env=env, stderr=subprocess.PIPE, text=True)
    assert proc.stderr is not None
    for line in proc.stderr:  # progress lines: kill once some papers are written, not all
        if "ingest: " in line and not line.startswith("ingest: 1500/"):
            break
    time.sleep(0.5)
    proc.send_signal(signal.SIGKILL)
    proc.wait()

    a = make_assistant(index_dir, embedder)
    partial = a.stats().papers  # the index opens
    assert 0 < partial < 1500
    report = a.ingest([source])
    assert report.added + report.updated == 1500 - report.unchanged
    store = a.store
    ids = [c.chunk_id for c in store.iter_chunks(with_documents=False)]
    assert len(ids) == len(set(ids))
    assert a.stats().papers == 1500
    assert a.ingest([source]).unchanged == 1500
