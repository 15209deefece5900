"""What crosses the product's edges: the web chat's door, uploads, JSON answers, pipes."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any

import httpx
import pytest

from rag import Answer, Citation, ConfigError, Hit, Paper
from rag.index.embedder import Embedder
from rag.jsonform import answer_json
from ui.app import Handlers, serve
from ui.auth import LoginGuard, check_exposure, is_loopback

from .conftest import make_assistant
from .servers import free_port

ROOT = Path(__file__).parent.parent


def rag_cli(
    *args: str, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, "-m", "rag.cli", *args]
    env = {**os.environ, "PYTHONPATH": str(ROOT), **(env or {})}
    return subprocess.run(cmd, capture_output=True, text=True, cwd=cwd, env=env, timeout=300)


# -- the door ------------------------------------------------------------------------------
def test_only_loopback_counts_as_private() -> None:
    for host in ("127.0.0.1", "127.0.0.2", "localhost", "::1", "[::1]"):
        assert is_loopback(host), host
    for host in ("0.0.0.0", "::", "192.168.1.5", "example.org", ""):
        assert not is_loopback(host), host


def test_off_loopback_needs_a_sign_in_or_an_explicit_no_auth() -> None:
    assert check_exposure("127.0.0.1", None, no_auth=False) == ""
    assert check_exposure("0.0.0.0", ("ada", "s3cret"), no_auth=False) == ""
    with pytest.raises(ConfigError, match=r"--auth user:pass .* or --no-auth"):
        check_exposure("0.0.0.0", None, no_auth=False)
    warning = check_exposure("0.0.0.0", None, no_auth=True)
    assert warning.startswith("warning:") and "open to anyone" in warning


def test_rag_serve_off_loopback_without_auth_refuses_to_start(tmp_path: Path) -> None:
    started = time.monotonic()
    result = rag_cli("serve", "--host", "0.0.0.0", "--index-dir", str(tmp_path / "idx"))
    assert result.returncode == 1 and result.stdout == ""
    assert result.stderr.count("\n") == 1 and "--auth" in result.stderr, result.stderr
    assert time.monotonic() - started < 60  # it stopped before serving anything


def attempt(guard: LoginGuard, user: str, password: str) -> bool | int:
    """True or False, or the HTTP status the sign-in was refused with."""
    from fastapi import HTTPException

    try:
        return asyncio.run(guard.check(user, password))
    except HTTPException as exc:
        return exc.status_code


def test_wrong_passwords_are_slowed_then_locked_out() -> None:
    guard = LoginGuard("ada", "s3cret", delay=0.05, free_tries=3, lock_s=0.5, max_lock_s=0.8)
    assert attempt(guard, "ada", "s3cret") is True
    started = time.monotonic()
    assert [attempt(guard, "ada", "guess") for _ in range(3)] == [False] * 3
    assert time.monotonic() - started >= 0.15  # each wrong one waits
    assert attempt(guard, "ada", "s3cret") == 429  # locked: the right password too
    time.sleep(0.55)
    assert attempt(guard, "ada", "s3cret") is True  # the lock ends, and a success resets it
    assert [attempt(guard, "ada", "guess") for _ in range(3)] == [False] * 3
    assert attempt(guard, "ada", "guess") == 429
    assert attempt(guard, "bob", "s3cret") is False  # a wrong name never gets in


def test_parallel_guesses_wait_in_line() -> None:
    guard = LoginGuard("ada", "s3cret", delay=0.1, free_tries=100)

    async def guesses() -> list[bool]:
        return list(await asyncio.gather(*(guard.check("ada", f"g{i}") for i in range(5))))

    started = time.monotonic()
    assert asyncio.run(guesses()) == [False] * 5
    assert time.monotonic() - started >= 0.5


def test_the_served_chat_locks_out_a_password_guesser(tmp_path: Path, embedder: Embedder) -> None:
    port = free_port()
    demo = serve(
        make_assistant(tmp_path / "idx", embedder),
        host="127.0.0.1",
        port=port,
        auth="ada:s3cret",
        block=False,
    )
    try:
        login = f"http://127.0.0.1:{port}/login"

        def sign_in(password: str) -> int:
            data = {"username": "ada", "password": password}
            return httpx.post(login, data=data, timeout=30).status_code

        assert sign_in("s3cret") == 200
        started = time.monotonic()
        assert [sign_in(f"guess-{i}") for i in range(5)] == [400] * 5
        assert time.monotonic() - started >= 5  # a second per wrong guess
        assert sign_in("s3cret") == 429
        assert httpx.get(f"http://127.0.0.1:{port}/config", timeout=30).status_code == 401
    finally:
        demo.close()


# -- uploads -------------------------------------------------------------------------------
def write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("".join(json.dumps(r) + "\n" for r in records), encoding="utf-8")
    return path


def uploads(tmp_path: Path) -> tuple[Path, Path]:
    """Two users' ``papers.jsonl``: different papers at the same places, no ids."""
    topics = ("bandits", "protein folding", "speech recognition")
    return tuple(  # type: ignore[return-value]
        write_jsonl(
            tmp_path / user / "papers.jsonl",
            [
                {"title": f"{user}'s paper on {t}", "abstract": f"{user} studies {t} anew."}
                for t in topics
            ],
        )
        for user in ("ada", "bob")
    )


def no_progress(*args: Any, **kwargs: Any) -> None:
    pass


def test_two_uploads_with_the_same_name_keep_both_users_papers(
    tmp_path: Path, embedder: Embedder
) -> None:
    assistant = make_assistant(tmp_path / "idx", embedder)
    handlers = Handlers(assistant)
    ada, bob = uploads(tmp_path)
    handlers.ingest([str(ada)], False, no_progress)
    result = handlers.ingest([str(bob)], False, no_progress)
    assert "3 added" in result and "updated" not in result
    assert assistant.stats().papers == 6
    again = handlers.ingest([str(bob)], False, no_progress)  # the same file once more
    assert "3 unchanged" in again and assistant.stats().papers == 6


def test_a_refused_upload_leaves_no_copy(tmp_path: Path, embedder: Embedder, monkeypatch) -> None:
    from ui import app

    monkeypatch.setattr(app, "_UPLOADS", tmp_path / "uploads")
    handlers = Handlers(make_assistant(tmp_path / "idx", embedder))
    bad = tmp_path / "broken.jsonl"
    bad.write_text('{"title": "no abstract here"}\n', encoding="utf-8")
    result = handlers.ingest([str(bad)], False, no_progress)
    assert "broken.jsonl" in result
    assert not any((tmp_path / "uploads").rglob("*.jsonl"))
    ada, _ = uploads(tmp_path)
    handlers.ingest([str(ada)], False, no_progress)  # an accepted upload is kept
    assert len(list((tmp_path / "uploads").rglob("*.jsonl"))) == 1


# -- answers as JSON -----------------------------------------------------------------------
HOSTILE = (
    "We study model merging. ![pixel](https://evil.example/p.png) Merged weights beat "
    "ensembles [see](javascript:alert(1)). <iframe src=https://evil.example></iframe>"
    "<svg onload=alert(2)></svg> Merging needs no data."
)


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.found: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.found.append(tag)


def assert_inert(value: Any) -> None:
    """No tag, script URL or remote image anywhere in a JSON value."""
    text = json.dumps(value, ensure_ascii=False)
    for needle in ("evil.example", "javascript:", "onload", "<iframe", "<svg"):
        assert needle not in text, needle
    parser = _Tags()
    for string in _strings(value):
        parser.feed(string)
    assert parser.found == []


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []


def test_answer_json_carries_no_active_content() -> None:
    paper = Paper(
        "p1",
        "Merging <img src=x onerror=alert(3)> models",
        HOSTILE,
        url="javascript:alert(4)",
        authors=("Ada <script>alert(5)</script>",),
    )
    answer = Answer(
        text=f"Merging helps [1]. {HOSTILE}",
        grounded=True,
        query="model merging",
        citations=(Citation(1, paper, quote=HOSTILE),),
        hits=(Hit(paper, 1.0, evidence=(HOSTILE,)),),
    )
    data = answer_json(answer)
    assert_inert(data)
    assert "Merging helps [1]." in data["text"] and "Merging needs no data." in data["text"]
    assert data["citations"][0]["paper"]["title"] == "Merging  models"
    assert data["references"] == "[1] Merging  models"


def test_ask_endpoint_and_cli_json_return_no_active_content(
    tmp_path: Path, embedder: Embedder
) -> None:
    assistant = make_assistant(tmp_path / "idx", embedder)
    source = write_jsonl(
        tmp_path / "hostile.jsonl",
        [{"id": "merge", "title": "Model Merging <b onclick=alert(1)>", "abstract": HOSTILE}],
    )
    assistant.ingest([source])
    question = "Does model merging beat ensembles?"
    reply = Handlers(assistant).ask_json(question, backend="extractive")  # what /ask returns
    assert reply["citations"] and reply["citations"][0]["paper"]["paper_id"] == "merge"
    assert_inert(reply)
    cli = rag_cli(
        "ask", question, "--json", "--llm", "extractive", "--index-dir", str(tmp_path / "idx")
    )
    assert cli.returncode == 0, cli.stderr
    assert_inert(json.loads(cli.stdout))


# -- pipes -----------------------------------------------------------------------------------
def test_a_closed_pipe_ends_the_command_quietly(bundled_index: Path) -> None:
    cmd = [sys.executable, "-m", "rag.cli", "stats", "--index-dir", str(bundled_index)]
    proc = subprocess.Popen(
        cmd, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()  # `| head -0`: the reader is gone before the first line
    stderr = proc.stderr.read()
    assert proc.wait(timeout=120) == 141
    assert stderr == ""


# -- how many papers -------------------------------------------------------------------------
@pytest.mark.parametrize("k", [-5, 0, 51, 1.5, "3", True])
def test_k_outside_1_to_50_is_one_error_at_every_door(bundled, k: Any) -> None:
    from rag import InputError

    for call in (
        lambda: bundled.search("test-time defense", k=k),
        lambda: bundled.ask("What does the CSR paper report?", k=k, llm="extractive"),
        lambda: bundled.related(bundled.papers()[0], k=k),
    ):
        with pytest.raises(InputError, match="k must be a whole number from 1 to 50"):
            call()
    import gradio as gr

    with pytest.raises(gr.Error, match="k must be a whole number from 1 to 50"):
        Handlers(bundled).ask_json("What does the CSR paper report?", k=k, backend="extractive")


def test_the_cli_refuses_a_negative_k_in_one_line(bundled_index: Path) -> None:
    cli = rag_cli("search", "test-time defense", "--k", "-5", "--index-dir", str(bundled_index))
    assert cli.returncode != 0
    assert cli.stdout == ""
    assert cli.stderr.strip().count("\n") == 0
    assert "k must be a whole number from 1 to 50" in cli.stderr
    most = rag_cli("search", "learning", "--k", "50", "--index-dir", str(bundled_index))
    assert most.returncode == 0 and most.stdout, most.stderr


def test_zero_width_characters_split_no_word(tmp_path: Path, embedder: Embedder) -> None:
    assistant = make_assistant(tmp_path / "idx", embedder)
    source = write_jsonl(
        tmp_path / "papers.jsonl",
        [
            {
                "id": "kernels",
                "url": "javascript:alert(1)",
                "title": "Spectral ker\u200dnels for graphs",
                "abstract": "We learn spectral ker\u200bnels on graphs. They beat random walk "
                "kernels on four molecule benchmarks.",
            },
            {"id": "other", "title": "Speech enhancement", "abstract": HOSTILE},
        ],
    )
    assistant.ingest([source])
    paper = next(p for p in assistant.papers() if p.paper_id == "kernels")
    assert "kernels" in paper.title and "kernels" in paper.abstract
    hits = assistant.search("spectral ker\u200dnels", k=1, mode="bm25")
    assert hits[0].paper.paper_id == "kernels"
    answer = assistant.ask("What do the spectral ker\u200cnels beat?", llm="extractive")
    assert 'ker"' not in answer.text and 'nels"' not in answer.text
    assert any(c.paper.paper_id == "kernels" for c in answer.citations), answer.text
    cli = rag_cli(
        "ask",
        "What do spectral kernels beat?",
        "--llm",
        "extractive",
        "--index-dir",
        str(tmp_path / "idx"),
    )
    assert cli.returncode == 0 and "References:" in cli.stdout, cli.stderr
    assert "javascript" not in cli.stdout  # a printed reference shows only web links


def test_asking_by_a_title_with_a_year_finds_that_paper(tmp_path: Path, embedder: Embedder) -> None:
    assistant = make_assistant(tmp_path / "idx", embedder)
    source = write_jsonl(
        tmp_path / "papers.jsonl",
        [
            {
                "id": "pommerman",
                "title": "Winning the NeurIPS 2018 Pommerman Competition",
                "abstract": "We describe the agent that won a multi-agent game competition. "
                "It combines tree search with a learned value function.",
                "venue": "ACML",
                "year": 2019,
            },
            {
                "id": "go",
                "title": "Tree search for the game of Go",
                "abstract": "We combine tree search with a learned value function for Go.",
                "venue": "NeurIPS",
                "year": 2018,
            },
        ],
    )
    assistant.ingest([source])
    answer = assistant.ask(
        "What does Winning the NeurIPS 2018 Pommerman Competition combine?", llm="extractive"
    )
    assert answer.citations and answer.citations[0].paper.paper_id == "pommerman", answer.text


@pytest.mark.parametrize(
    ("args", "said"),
    [
        ({"year": "abc"}, "year must be a year"),
        ({"year": True}, "year must be a year"),
        ({"venue": 123}, "venue must be text"),
        ({"k": "abc"}, "k must be a whole number"),
        ({"question": 123}, "Ask a question"),
        ({"backend": 5}, "backend must be one of"),
    ],
)
def test_the_ask_endpoint_answers_wrong_types_with_a_message(bundled, args, said) -> None:
    import gradio as gr

    call = {"question": "What does the CSR paper report?", "backend": "extractive", **args}
    with pytest.raises(gr.Error, match=said):
        Handlers(bundled).ask_json(**call)


def test_a_reversed_year_range_is_named(bundled, bundled_index: Path) -> None:
    from rag import InputError

    with pytest.raises(InputError, match="year range 2027-2025 is empty"):
        bundled.search("test-time defense", year_min=2027, year_max=2025)
    cli = rag_cli(
        "search", "defense", "--year-min", "2027", "--year-max", "2025",
        "--index-dir", str(bundled_index),
    )  # fmt: skip
    assert cli.returncode != 0 and "Give 2025-2027" in cli.stderr, cli.stderr


@pytest.mark.parametrize("damage", ["truncated", "random", "empty"])
def test_a_damaged_database_is_one_line_and_left_as_it_is(
    tmp_path: Path, embedder: Embedder, damage: str
) -> None:
    import hashlib

    index = tmp_path / "idx"
    source = write_jsonl(
        tmp_path / "p.jsonl", [{"id": "a", "title": "A paper", "abstract": "We study things."}]
    )
    make_assistant(index, embedder).ingest([source])
    db = index / "chroma.sqlite3"
    if damage == "truncated":
        with db.open("r+b") as f:
            f.truncate(20000)
    elif damage == "random":
        db.write_bytes(os.urandom(200_000))
    else:
        db.write_bytes(b"")
    before = hashlib.md5(db.read_bytes()).hexdigest()
    for command in (["stats"], ["search", "things"], ["ingest", str(source)]):
        cli = rag_cli(*command, "--index-dir", str(index))
        assert cli.returncode != 0, command
        assert cli.stderr.strip().count("\n") == 0, cli.stderr
        assert "is damaged" in cli.stderr and "Restore the folder" in cli.stderr, cli.stderr
    assert hashlib.md5(db.read_bytes()).hexdigest() == before  # never recreated over


# -- a folder that is not yours ------------------------------------------------------------
READS = [
    ["stats"],
    ["search", "model merging"],
    ["ask", "Which papers tackle model merging?", "--llm", "extractive"],
    ["related", "DensityFlow: generative framework that constructs robust CEs"],
    ["topics"],
]


def digests(folder: Path) -> dict[str, str]:
    import hashlib

    return {
        str(f.relative_to(folder)): hashlib.md5(f.read_bytes()).hexdigest()
        for f in sorted(folder.rglob("*"))
        if f.is_file()
    }


@pytest.fixture()
def own_index(tmp_path: Path, embedder: Embedder) -> Path:
    index = tmp_path / "idx"
    make_assistant(index, embedder).ingest([ROOT / "rag" / "data" / "icml2026_abstracts.txt"])
    return index


def cold(tmp_path: Path) -> dict[str, str]:
    """A reader with an empty cache of its own (the model files stay where they are)."""
    from rag.settings import models_dir

    return {"RAG_CACHE_DIR": str(tmp_path / "cold-cache"), "RAG_MODELS_DIR": str(models_dir())}


def test_reading_an_index_never_writes_to_it(own_index: Path, tmp_path: Path) -> None:
    before = digests(own_index)
    for command in READS:
        cli = rag_cli(*command, "--index-dir", str(own_index), env=cold(tmp_path))
        assert cli.returncode == 0 and cli.stdout.strip(), (command, cli.stderr)
        assert digests(own_index) == before, command


@pytest.fixture()
def read_only(own_index: Path, tmp_path: Path) -> Iterator[Path]:
    """The index seen through a read-only bind mount: no write reaches it, even as root."""
    if os.geteuid() != 0:
        pytest.skip("a read-only bind mount needs root")
    view = tmp_path / "read-only-view"
    view.mkdir()
    for step in (["--bind", own_index, view], ["-o", "remount,ro,bind", view]):
        mounted = subprocess.run(["mount", *map(str, step)], capture_output=True, text=True)
        if mounted.returncode != 0:
            subprocess.run(["umount", str(view)], capture_output=True)
            pytest.skip(f"cannot mount here: {mounted.stderr.strip()}")
    try:
        yield view
    finally:
        subprocess.run(["umount", str(view)], check=True)


def test_a_read_only_index_answers_and_refuses_an_ingest_in_one_line(
    read_only: Path, own_index: Path, tmp_path: Path
) -> None:
    before = digests(own_index)
    for command in READS:
        cli = rag_cli(*command, "--index-dir", str(read_only), env=cold(tmp_path))
        assert cli.returncode == 0 and cli.stdout.strip(), (command, cli.stderr)
    papers = write_jsonl(
        tmp_path / "p.jsonl", [{"id": "n", "title": "A new paper", "abstract": "We study it."}]
    )
    cli = rag_cli("ingest", str(papers), "--index-dir", str(read_only), env=cold(tmp_path))
    assert cli.returncode != 0 and cli.stderr.strip().count("\n") == 0, cli.stderr
    assert f"{read_only}/ is read-only" in cli.stderr, cli.stderr
    assert digests(own_index) == before


def test_an_index_without_its_snapshot_read_only_says_what_to_do(
    read_only: Path, own_index: Path, tmp_path: Path
) -> None:
    """An index whose last ingest was cut short before its snapshot was written (or that an
    older version wrote) must be opened to be read: one line says who can fix it, and how."""
    import shutil

    subprocess.run(["umount", str(read_only)], check=True)
    shutil.rmtree(own_index / "snapshot")
    for step in (["--bind", own_index, read_only], ["-o", "remount,ro,bind", read_only]):
        subprocess.run(["mount", *map(str, step)], check=True)
    cli = rag_cli("search", "merging", "--index-dir", str(read_only), env=cold(tmp_path))
    assert cli.returncode != 0 and cli.stderr.strip().count("\n") == 0, cli.stderr
    assert "read-only" in cli.stderr and "its owner runs `rag ingest PATH`" in cli.stderr


@pytest.mark.parametrize(
    ("call", "said"),
    [
        ({"question": 123}, "question must be text"),
        ({"venue": 123}, "venue must be text"),
        ({"year": "abc"}, "year must be a whole year"),
        ({"year_min": 2020.5}, "year_min must be a whole year"),
        ({"author": ["Ada"]}, "author must be text"),
        ({"venu": "ICML"}, "unknown filter venu; the filters are venue, year, "),
    ],
)
def test_the_python_api_refuses_wrong_types_with_input_error(bundled, call, said) -> None:
    from rag import InputError

    args = {"question": "test-time defense", **call}
    question = args.pop("question")
    with pytest.raises(InputError, match=said):
        bundled.search(question, **args)
    with pytest.raises(InputError, match=said):
        bundled.ask(question, llm="extractive", **args)


def test_a_year_that_leaves_no_paper_is_named_and_the_search_widened(
    tmp_path: Path, embedder: Embedder
) -> None:
    assistant = make_assistant(tmp_path / "idx", embedder)
    source = write_jsonl(
        tmp_path / "papers.jsonl",
        [
            {
                "id": "go",
                "title": "Tree search for the game of Go",
                "abstract": "We combine tree search with a learned value function for Go. "
                "The agent beats a professional player in five of five games.",
                "venue": "ACML",
                "year": 2019,
            },
            {
                "id": "speech",
                "title": "Streaming speech recognition",
                "abstract": "We transcribe spoken audio with a streaming transducer.",
                "venue": "ACML",
                "year": 2019,
            },
        ],
    )
    assistant.ingest([source])
    answer = assistant.ask("What does the 2018 tree search work for Go beat?", llm="extractive")
    assert answer.text.startswith("No indexed paper is from 2018;"), answer.text
    assert answer.citations and answer.citations[0].paper.paper_id == "go", answer.text
    # a filter passed on purpose is kept as given
    kept = assistant.ask("What does the tree search work for Go beat?", llm="extractive", year=2018)
    assert not kept.citations
