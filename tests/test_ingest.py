"""Ingestion into a real Chroma index with the real embedder: incremental, safe, complete."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

from rag.errors import EmbedderMismatchError, InputError
from rag.index.embedder import Embedder
from rag.index.store import PaperStore
from rag.settings import EmbedderSettings

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
    """Everything in the collection: chunk ids with their text, metadata and vector, and the
    collection's metadata."""
    store = PaperStore(make_assistant(index_dir, embedder).settings.store)
    if not store.exists():
        return {}
    chunks = {
        c.chunk_id: (c.text, tuple(sorted(c.meta.items())), c.vector.tobytes())
        for c in store.iter_chunks(with_vectors=True)
        if c.vector is not None
    }
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


def test_each_chunk_gets_its_own_vector_across_windows_and_files(
    tmp_path: Path, embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunks are embedded sorted by length, in windows spanning files, and written as their
    papers complete: every vector still lands on its own chunk."""
    import rag.ingest.pipeline

    monkeypatch.setattr(rag.ingest.pipeline, "_WINDOW_PAPERS", 7)
    monkeypatch.setattr(rag.ingest.pipeline, "_WRITE_PAPERS", 3)
    calls: list[tuple[int, int, str]] = []

    def progress(done: int, total: int) -> None:
        calls.append((done, total, threading.current_thread().name))

    a = make_assistant(tmp_path / "idx", embedder)
    extra = write_jsonl(tmp_path / "p.jsonl", papers(20))
    report = a.ingest([BUNDLED, extra], progress=progress)
    assert report.added == 39
    chunks = list(a.store.iter_chunks(with_vectors=True))
    assert len(chunks) == report.chunks_written > 39
    expected = embedder.embed([f"{c.meta['title']}. {c.text}" for c in chunks])
    stored = np.stack([c.vector for c in chunks if c.vector is not None])
    assert np.sum(stored * expected, axis=1).min() >= 0.9999

    done = [d for d, _, _ in calls]
    assert done == sorted(done) and done[-1] == 39 and len(done) >= 2
    assert {(t, name) for _, t, name in calls} == {(39, threading.main_thread().name)}


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
    assert (report.added, report.updated, report.unchanged, report.replaced) == (0, 1, 2, 1)
    assert "1 updated (1 at the same place in the same file)" in report.summary()
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
    "nested.json": "[" * 100_000 + "]" * 100_000,
    "huge_year.jsonl": '{"abstract": "A paper from the far future.", "year": 99999999999999999999}',
    "list_year.jsonl": '{"abstract": "A paper with a list for a year.", "year": [2020]}',
    "bool_year.jsonl": '{"abstract": "A paper with a boolean year.", "year": true}',
    "long_abstract.jsonl": json.dumps({"abstract": "word " * 5_000}),
    "object_title.jsonl": '{"abstract": "A paper whose title is an object.", "title": {"a": 1}}',
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


def test_what_is_not_a_regular_file_is_refused_without_reading_it(tmp_path: Path, embedder) -> None:
    a = make_assistant(tmp_path / "idx", embedder)
    a.ingest([write_jsonl(tmp_path / "good.jsonl", papers(2))])
    before = snapshot(tmp_path / "idx", embedder)
    fifo = tmp_path / "papers.jsonl"
    os.mkfifo(fifo)  # opening it to read would wait for a writer forever
    for path, kind in ((fifo, "FIFO"), (Path("/dev/zero"), "device")):
        with pytest.raises(InputError, match=f"not a regular file \\(a {kind}\\)"):
            a.ingest([path])
    assert snapshot(tmp_path / "idx", embedder) == before


@pytest.mark.parametrize(
    ("name", "content", "skip_invalid"),
    [
        ("deep.json", "[" * 100_000 + "]" * 100_000, True),
        ("deep.jsonl", "[" * 100_000 + "]" * 100_000, False),
        ("fifo.jsonl", None, True),
        ("zero.jsonl", "/dev/zero", False),
        ("year.jsonl", '{"abstract": "Far future.", "year": 99999999999999999999}', False),
    ],
)
def test_cli_refuses_bad_files_in_one_line(
    tmp_path: Path, bundled_index: Path, name: str, content: str | None, skip_invalid: bool
) -> None:
    index = tmp_path / "idx"
    shutil.copytree(bundled_index, index)
    bad = tmp_path / name
    if content is None:
        os.mkfifo(bad)
    elif content == "/dev/zero":
        bad = Path(content)
    else:
        bad.write_text(content)
    cmd = [sys.executable, "-m", "rag.cli", "ingest", str(bad), "--index-dir", str(index)]
    files_before = sorted((p.name, p.stat().st_size) for p in index.rglob("*") if p.is_file())
    result = subprocess.run(
        cmd + (["--skip-invalid"] if skip_invalid else []),
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1, result.stderr
    assert str(bad) in result.stderr
    files_after = sorted((p.name, p.stat().st_size) for p in index.rglob("*") if p.is_file())
    assert files_after == files_before


def test_files_with_the_same_name_in_two_folders_are_two_sources(tmp_path: Path) -> None:
    index = ["--index-dir", str(tmp_path / "idx")]
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
        records = [{k: v for k, v in r.items() if k != "id"} for r in papers(3, prefix=folder)]
        for r in records:  # same places in the file, different papers
            r["abstract"] = f"Folder {folder}: " + r["abstract"]
        write_jsonl(tmp_path / folder / "papers.jsonl", records)
    runs = [
        subprocess.run(
            [sys.executable, "-m", "rag.cli", "ingest", "papers.jsonl", *index],
            capture_output=True,
            text=True,
            cwd=tmp_path / folder,
            env={**os.environ, "PYTHONPATH": str(ROOT)},
        )
        for folder in ("a", "b")
    ]
    assert [r.returncode for r in runs] == [0, 0], runs[1].stderr
    assert "3 added, 0 updated" in runs[1].stdout
    stats = subprocess.run(
        [sys.executable, "-m", "rag.cli", "stats", *index], capture_output=True, text=True, cwd=ROOT
    )
    assert "papers:   6" in stats.stdout


def test_an_id_from_another_file_is_refused_unless_replace(tmp_path: Path, embedder) -> None:
    a = make_assistant(tmp_path / "idx", embedder)
    for folder in ("a", "b"):
        (tmp_path / folder).mkdir()
    a.ingest([write_jsonl(tmp_path / "a" / "papers.jsonl", papers(3))])
    before = snapshot(tmp_path / "idx", embedder)
    other = papers(3)
    other[1]["abstract"] = "We study robotics with a wholly different method and data."
    theirs = write_jsonl(tmp_path / "b" / "papers.jsonl", other)
    with pytest.raises(InputError, match=r"b/papers.jsonl:2: id 'p1' is already another paper"):
        a.ingest([theirs])
    assert snapshot(tmp_path / "idx", embedder) == before
    skipped = a.ingest([theirs], skip_invalid=True)
    assert (skipped.unchanged, len(skipped.skipped)) == (2, 1)
    assert snapshot(tmp_path / "idx", embedder) == before
    replaced = a.ingest([theirs], replace=True)
    assert (replaced.updated, replaced.unchanged) == (1, 2)
    assert "wholly different" in a.search("robotics wholly different method", 1)[0].paper.abstract


def test_a_bad_year_is_refused_and_filtered_questions_keep_working(
    tmp_path: Path, embedder
) -> None:
    a = make_assistant(tmp_path / "idx", embedder)
    a.ingest([BUNDLED])
    source = tmp_path / "years.jsonl"
    source.write_text(
        '{"id": "far", "abstract": "Model merging in the far future.", '
        '"year": 99999999999999999999}\n'
        '{"id": "na", "abstract": "Model merging without a date.", "year": "n/a", '
        '"venue": "ICML"}\n'
    )
    with pytest.raises(InputError, match="years.jsonl:1: year 99999999999999999999 is not a year"):
        a.ingest([source])
    report = a.ingest([source], skip_invalid=True)
    assert (report.added, [w for w, _ in report.skipped]) == (1, [f"{source}:1"])
    assert report.dropped == [(f"{source}:2", "year 'n/a' names no year, so the paper has none")]
    assert a.search("model merging", 5, year=2026)
    answer = a.ask("Which ICML 2026 papers tackle model merging?")
    assert answer.grounded and "na" not in [c.paper.paper_id for c in answer.citations]


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


@pytest.fixture()
def small_disk(tmp_path: Path) -> Iterator[Path]:
    """A 300 KiB tmpfs: too small for the bundled index (needs root to mount)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    if os.geteuid() != 0 or not shutil.which("mount"):
        pytest.skip("mounting a small tmpfs needs root")
    mount = ["mount", "-t", "tmpfs", "-o", "size=300k", "tmpfs", str(disk)]
    mounted = subprocess.run(mount, capture_output=True, text=True)
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.strip()}")
    try:
        yield disk
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def test_a_full_disk_is_one_line_and_a_rerun_completes(small_disk: Path, embedder) -> None:
    index = small_disk / "idx"
    cmd = [sys.executable, "-m", "rag.cli", "ingest", str(BUNDLED), "--index-dir", str(index)]
    full = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert full.returncode == 1
    assert full.stderr.startswith("error: ") and full.stderr.count("\n") == 1, full.stderr
    assert "is full" in full.stderr and "run the same command again" in full.stderr

    subprocess.run(["mount", "-o", "remount,size=16m", str(small_disk)], check=True)
    rerun = subprocess.run(cmd, capture_output=True, text=True, cwd=ROOT, timeout=300)
    assert rerun.returncode == 0, rerun.stderr
    a = make_assistant(index, embedder)
    ids = [c.chunk_id for c in a.store.iter_chunks(with_documents=False)]
    assert len(ids) == len(set(ids)) and a.stats().papers == 19
    assert a.ingest([BUNDLED]).unchanged == 19


def test_an_index_written_before_years_were_checked_still_answers(tmp_path: Path, embedder) -> None:
    a = make_assistant(tmp_path / "idx", embedder)
    a.ingest([BUNDLED, write_jsonl(tmp_path / "far.jsonl", papers(1, prefix="far"))])
    (chunk,) = [c for c in a.store.iter_chunks(with_vectors=True) if c.chunk_id == "far0::0"]
    assert chunk.vector is not None
    meta = {**chunk.meta, "year": 1e20}  # what such an index holds for year 99999999999999999999
    a.store.upsert([chunk.chunk_id], chunk.vector[None, :], [chunk.text], [meta])
    a.store.bump_version()
    assert a.stats().papers == 20
    assert a.search("model merging", 3, year=2026)
    assert a.ask("Which ICML 2026 papers tackle model merging?").grounded
