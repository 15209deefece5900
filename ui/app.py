"""The web chat: a gradio adapter over the public ``Assistant`` API.

``build_app(assistant)`` lays out the page and wires it to ``Handlers``; ``serve`` launches
it on loopback by default. Gradio is imported inside functions only, so importing this
module (and the CLI that names it) stays fast. Rendering lives in ``ui.render``.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, cast

from rag import Answer, Assistant, ConfigError, IndexStats, RagError, Settings, Step
from rag.jsonform import answer_json
from rag.types import Backend

from . import papers as paper_actions
from . import render
from . import topics as topics_tab
from .forms import filter_kwargs
from .render import FileResult, Turn

if TYPE_CHECKING:
    import gradio as gr

log = logging.getLogger(__name__)

EXAMPLES = (  # when the index is empty; otherwise Assistant.suggestions() of what it holds
    "What are the main themes of the indexed papers?",
)
BACKEND_LABELS: dict[Backend, str] = {
    "local": "Local model",
    "openai": "OpenAI-compatible",
    "extractive": "Extractive (no LLM)",
}
BACKENDS = [(label, name) for name, label in BACKEND_LABELS.items()]
FILE_TYPES = [".txt", ".md", ".json", ".jsonl", ".ndjson", ".csv", ".tsv"]
_UPLOADS = Path(tempfile.gettempdir()) / "rag-papers-uploads"
_DRAFT_EVERY_S = 0.1  # redraw a streaming answer at most this often, not once per token
# Bring a new question to the top of the transcript when it is asked and again when its
# answer is complete, and otherwise leave the scrolling to the reader (gradio's autoscroll
# gives up when one update adds more than a few lines).
SCROLL_TO_NEW_TURN = """
let shown = null;
watch('value', () => {
  const box = document.getElementById('transcript');
  const turns = element.querySelectorAll('.turn');
  const last = turns[turns.length - 1];
  if (!last) { shown = null; return; }
  const key = last.id + (last.dataset.done ? ':done' : '');
  if (!box || key === shown) return;
  shown = key;
  box.scrollTop += last.getBoundingClientRect().top - box.getBoundingClientRect().top - 6;
});
"""


def index_state(assistant: Assistant) -> tuple[IndexStats | None, str]:
    """The index's stats, or None and what is wrong with it (no index, empty, unreadable)."""
    try:
        return assistant.stats(), ""
    except RagError as exc:
        return None, str(exc)
    except Exception as exc:  # the store may still let a client error through: say so, go on
        log.warning("cannot read the index: %s", exc)
        return None, f"The index cannot be read ({type(exc).__name__}: {exc})."


def backend_choices(settings: Settings) -> tuple[list[tuple[str, str]], str]:
    """The backends the menu offers, and why any is left out: the OpenAI-compatible one only
    once an endpoint is configured (otherwise choosing it could only fail)."""
    if openai_configured(settings):
        openai = f"OpenAI-compatible ({settings.llm.openai.model})"
        return [BACKENDS[0], (openai, "openai"), BACKENDS[2]], ""
    return [BACKENDS[0], BACKENDS[2]], (
        "OpenAI-compatible: not offered until an endpoint is set (llm.openai.base_url)."
    )


def openai_configured(settings: Settings) -> bool:
    """Whether settings or the environment name an OpenAI-compatible endpoint to use."""
    llm = settings.llm
    defaults = type(llm.openai)()
    named = (llm.openai.base_url, llm.openai.model) != (defaults.base_url, defaults.model)
    return llm.backend == "openai" or named or bool(os.environ.get("OPENAI_BASE_URL"))


class Handlers:
    """What the page's events do, over one assistant shared by every browser session.

    Each session's chat lives in its own ``gr.State`` (a list of ``Turn``); nothing here
    holds per-user data. The local model serialises its own generations (``rag.answer.llm``).
    """

    def __init__(self, assistant: Assistant) -> None:
        self.assistant = assistant
        self._ingest_lock = threading.Lock()

    # -- chat ----------------------------------------------------------------------------
    def events(
        self, question: str, history: list[Answer], backend: str, **options: Any
    ) -> Iterator[str | Step | Answer]:
        """``Assistant.stream`` with the chosen backend."""
        yield from self.assistant.stream(question, history, llm=backend, **options)

    def ask(
        self,
        question: str,
        turns: list[Turn],
        backend: str,
        k: float,
        venue: str | None,
        year: str | None,
    ) -> Iterator[tuple[Any, ...]]:
        """Stream one answer into the chat: a draft as pieces come, then the checked answer."""
        import gradio as gr

        question = (question or "").strip()
        if not question:
            yield tuple(gr.skip() for _ in range(4))
            return
        history = [t.answer for t in turns if t.answer is not None]
        turns = [*turns, Turn(question)]
        yield self.view(turns, clear=True)
        draft, shown = "", 0.0
        try:
            options = {"k": int(k), **filter_kwargs(venue, year)}
            for event in self.events(question, history, backend, **options):
                if isinstance(event, Answer):
                    turns[-1] = Turn(question, answer=event)
                    continue
                if isinstance(event, Step):  # every stage is shown as it starts
                    turns[-1] = replace(turns[-1], stage=event.stage, hits=event.hits)
                    shown = time.monotonic()
                    yield self.view(turns)
                    continue
                draft += event
                turns[-1] = replace(turns[-1], draft=draft)
                if time.monotonic() - shown >= _DRAFT_EVERY_S:
                    shown = time.monotonic()
                    yield self.view(turns)
        except RagError as exc:
            turns[-1] = Turn(question, error=str(exc))
        except Exception as exc:  # never a stack trace in the page; the log keeps it
            log.exception("answering %r failed", question)
            turns[-1] = Turn(question, error=self._explain(exc))
        yield self.view(turns)

    def _explain(self, exc: Exception) -> str:
        """An unexpected error, told as the index problem behind it when there is one."""
        problem = index_state(self.assistant)[1]
        if problem:
            return f"No papers to search yet; add paper lists in the Library tab. ({problem})"
        return _unexpected(exc)

    def view(self, turns: list[Turn], clear: bool = False) -> tuple[Any, ...]:
        """Transcript, chat state, question box (emptied when ``clear``), and the example
        questions, shown only on an empty chat."""
        import gradio as gr

        return (
            render.transcript_html(turns),
            turns,
            "" if clear else gr.skip(),
            gr.update(visible=not turns),
        )

    def new_chat(self) -> tuple[Any, ...]:
        """An empty chat: the session's history is dropped."""
        return self.view([], clear=True)

    def ask_json(
        self,
        question: str,
        k: int | None = None,
        venue: str | None = None,
        year: int | None = None,
        backend: str | None = None,
    ) -> dict[str, Any]:
        """One answer as JSON (``rag.jsonform``); errors come back as their message."""
        import gradio as gr

        backend = backend or self.assistant.settings.llm.backend
        if not isinstance(question, str) or not question.strip():
            raise gr.Error("Ask a question (text).")
        if not isinstance(backend, str):
            raise gr.Error(f"backend must be one of {', '.join(BACKEND_LABELS)}.")
        if backend not in {value for _, value in BACKENDS}:
            raise gr.Error(f"Unknown backend {backend!r}; use {', '.join(BACKEND_LABELS)}.")
        offered, why_not = backend_choices(self.assistant.settings)
        if backend not in {value for _, value in offered}:
            raise gr.Error(why_not)
        final: Answer | None = None
        try:
            options = {"k": k, **filter_kwargs(venue, year)}
            for event in self.events(question, [], backend, **options):
                if isinstance(event, Answer):
                    final = event
        except RagError as exc:
            raise gr.Error(str(exc)) from None
        assert final is not None
        return answer_json(final)

    # -- index and library ---------------------------------------------------------------
    def refresh(self, venue: str | None, year: str | None) -> tuple[Any, ...]:
        """Header, banner, filter choices and library table, from the index as it is."""
        import gradio as gr

        stats, problem = index_state(self.assistant)
        venues, years = _filter_choices(stats)
        rows = self.library_rows() if stats else []
        return (
            render.header_html(stats),
            gr.update(value=render.banner_html(problem), visible=bool(problem)),
            gr.update(choices=venues, value=_keep(venue, venues)),
            gr.update(choices=years, value=_keep(year, years)),
            gr.update(value=rows or None),
            _count(len(rows)),
        )

    def library_rows(self) -> list[list[str]]:
        try:
            return render.library_rows(self.assistant.papers())
        except RagError:
            return []

    def ingest(
        self, files: list[str] | None, skip_invalid: bool, progress: Callable[..., Any]
    ) -> str:
        """Ingest each uploaded file on its own: one bad file is reported, the rest go in."""
        if not files:
            return render.ingest_results_html([FileResult("(none)", error="Choose files first.")])
        results = []
        with self._ingest_lock:
            for i, upload in enumerate(files):
                progress((i, len(files)), desc=f"Reading {Path(upload).name}", unit="files")
                results.append(self._ingest_file(Path(upload), skip_invalid, progress))
        return render.ingest_results_html(results)

    def _ingest_file(
        self, upload: Path, skip_invalid: bool, progress: Callable[..., Any]
    ) -> FileResult:
        name = upload.name
        path, fresh = _stable_copy(upload)

        def embedded(done: int, total: int) -> None:
            progress((done, total), desc=f"Embedding {name}", unit="papers")

        ingested = False
        try:
            report = self.assistant.ingest([path], skip_invalid=skip_invalid, progress=embedded)
            ingested = True
            report.skipped = [(_name_only(w, path), why) for w, why in report.skipped]
            report.dropped = [(_name_only(w, path), what) for w, what in report.dropped]
            return FileResult(name, report)
        except RagError as exc:
            return FileResult(name, error=_name_only(str(exc), path))
        except Exception as exc:
            log.exception("ingesting %s failed", name)
            return FileResult(name, error=_unexpected(exc))
        finally:
            if fresh and not ingested:
                shutil.rmtree(path.parent, ignore_errors=True)  # a refused upload leaves nothing


def _filter_choices(
    stats: IndexStats | None,
) -> tuple[list[tuple[str, str]], list[tuple[str, str]]]:
    venues = [("All venues", "")]
    years = [("All years", "")]
    if stats is not None:
        venues += [(f"{v} ({n})", v) for v, n in stats.venues.items() if v != "?"]
        years += [(f"{y} ({n})", str(y)) for y, n in sorted(stats.years.items(), reverse=True)]
    return venues, years


def _count(papers: int) -> str:
    return f"### {papers} indexed paper{'s' if papers != 1 else ''}"


def _keep(value: str | None, choices: list[tuple[str, str]]) -> str:
    return value if value in {v for _, v in choices} else ""


def _stable_copy(upload: Path) -> tuple[Path, bool]:
    """The upload under a folder named by its content, and whether it is new there.

    The index records each paper's source path: two uploads with the same name (two users'
    ``papers.jsonl``) are two sources, so one never replaces the other's papers, and the
    same file uploaded again is the same source, so nothing changes.
    """
    digest = hashlib.sha256(upload.read_bytes()).hexdigest()[:16]
    target = _UPLOADS / digest / upload.name
    fresh = not target.exists()
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(upload, target)
    return target, fresh


def _name_only(text: str, path: Path) -> str:
    """A message about ``path`` naming the file as the user knows it."""
    return text.replace(str(path), path.name)


def _unexpected(exc: Exception) -> str:
    return f"Something went wrong ({type(exc).__name__}). The server log has the details."


# -- the page ------------------------------------------------------------------------------------
def build_app(assistant: Assistant) -> gr.Blocks:
    """The web chat over ``assistant``: a Chat tab and a Library tab, plus the ``ask`` API.

    Opens even when there is no index yet (a banner says how to add papers). Styling comes
    with ``serve``; pass ``ui.style.theme()`` and ``ui.style.CSS`` to ``launch`` otherwise.
    """
    import gradio as gr

    handlers = Handlers(assistant)
    stats, problem = index_state(assistant)
    with gr.Blocks(title="Paper Q&A", analytics_enabled=False) as demo:
        turns = gr.State([])
        header = gr.HTML(render.header_html(stats), apply_default_css=False)
        banner = gr.HTML(
            render.banner_html(problem), visible=bool(problem), elem_id="banner", js_on_load=None
        )
        with gr.Tabs():
            with gr.Tab("Chat", id="chat"):
                chat = _chat_tab(gr, assistant, stats)
            with gr.Tab("Library", id="library"):
                library = _library_tab(gr, assistant, stats)
            with gr.Tab("Topics", id="topics"):
                topics_tab.build_tab(gr, assistant, *_filter_choices(stats))
        _wire_chat(gr, handlers, chat, turns)
        _wire_library(gr, handlers, library, chat, header, banner, demo)
        gr.api(handlers.ask_json, api_name="ask", concurrency_limit="default")
    return demo


def suggested(assistant: Assistant) -> list[str]:
    """The example questions: from the index (its themes and papers), else ``EXAMPLES``."""
    try:
        return assistant.suggestions() or list(EXAMPLES)
    except RagError as exc:
        log.warning("No suggested questions: %s", exc)
        return list(EXAMPLES)


def _chat_tab(gr: Any, assistant: Assistant, stats: IndexStats | None) -> SimpleNamespace:
    settings = assistant.settings
    venues, years = _filter_choices(stats)
    with gr.Row(equal_height=False):
        with gr.Column(scale=4):
            transcript = gr.HTML(
                render.transcript_html([]),
                elem_id="transcript",
                js_on_load=SCROLL_TO_NEW_TURN + paper_actions.RELATED_CLICK,
            )
            with gr.Row(elem_id="examples") as examples:
                buttons = [
                    gr.Button(q, size="sm", variant="secondary", scale=0, min_width=0)
                    for q in suggested(assistant)
                ]
            with gr.Row(elem_id="composer", equal_height=True):
                question = gr.Textbox(
                    placeholder="Ask about the indexed papers…  (Shift+Enter for a new line)",
                    show_label=False,
                    container=False,
                    lines=1,
                    max_lines=6,
                    scale=8,
                    elem_id="question",
                    autofocus=True,
                )
                ask = gr.Button("Ask", variant="primary", scale=0, min_width=96, elem_id="ask")
        with gr.Column(scale=1, min_width=250, elem_id="controls"):
            new = gr.Button("New chat", size="sm", elem_id="new-chat")
            offered, why_not = backend_choices(settings)
            backend = gr.Dropdown(
                offered,
                value=settings.llm.backend,
                label="Answering with",
                info=why_not or None,
                elem_id="backend",
            )
            k = gr.Slider(
                1,
                max(12, settings.retrieval.k),
                value=settings.retrieval.k,
                step=1,
                label="Papers to retrieve (k)",
            )
            venue = gr.Dropdown(venues, value="", label="Venue", elem_id="venue")
            year = gr.Dropdown(years, value="", label="Year", elem_id="year")
            export = paper_actions.export_controls(gr)
    return SimpleNamespace(
        transcript=transcript,
        examples=examples,
        buttons=buttons,
        question=question,
        ask=ask,
        new=new,
        backend=backend,
        k=k,
        venue=venue,
        year=year,
        export=export,
    )


def _library_tab(gr: Any, assistant: Assistant, stats: IndexStats | None) -> SimpleNamespace:
    limit = assistant.settings.serve.max_upload_mb
    gr.Markdown("### Add papers", elem_classes="section-title")
    with gr.Row(equal_height=False):
        with gr.Column(scale=2):
            files = gr.File(
                file_count="multiple",
                file_types=FILE_TYPES,
                label=f"Paper lists (.txt, .json, .jsonl, .csv; up to {limit} MB each)",
                elem_id="upload",
            )
            skip = gr.Checkbox(False, label="Skip invalid records instead of refusing the file")
            add = gr.Button("Add to index", variant="primary", elem_id="add")
        with gr.Column(scale=3):
            results = gr.HTML("", elem_id="ingest-results", js_on_load=None)
    # filled when a page loads (see _wire_library), so the rows are not also in the config
    count = gr.Markdown(_count(stats.papers if stats else 0), elem_id="library-count")
    table = gr.Dataframe(
        value=None,
        headers=render.LIBRARY_HEADERS,
        datatype="str",
        interactive=False,
        show_search="search",
        wrap=True,
        max_height=560,
        column_widths=["46%", "9%", "7%", "24%", "14%"],
        elem_id="library",
    )
    return SimpleNamespace(
        files=files, skip=skip, add=add, results=results, count=count, table=table
    )


def _wire_chat(gr: Any, handlers: Handlers, chat: SimpleNamespace, turns: Any) -> None:
    outputs = [chat.transcript, turns, chat.question, chat.examples]
    controls = [turns, chat.backend, chat.k, chat.venue, chat.year]
    # UI events are named so that none takes "ask" (the public endpoint) by default
    private = {"api_visibility": "private", "show_progress": "hidden"}
    ask = [handlers.ask, [chat.question, *controls], outputs]
    answered = [
        chat.question.submit(*ask, api_name="chat_submit", **private),
        chat.ask.click(*ask, api_name="chat_ask", **private),
    ]
    for i, button in enumerate(chat.buttons):  # a button's value is its label: the question
        answered.append(
            button.click(
                handlers.ask, [button, *controls], outputs, api_name=f"chat_example_{i}", **private
            )
        )
    answered.append(
        chat.new.click(handlers.new_chat, None, outputs, api_name="chat_new", **private)
    )
    paper_actions.wire(gr, handlers, chat, turns, outputs, answered)


def _wire_library(
    gr: Any,
    handlers: Handlers,
    library: SimpleNamespace,
    chat: SimpleNamespace,
    header: Any,
    banner: Any,
    demo: Any,
) -> None:
    # gradio finds the progress tracker by its default value
    def ingest(files: list[str] | None, skip: bool, progress: Any = gr.Progress()) -> str:  # noqa: B008
        return handlers.ingest(files, skip, progress)

    refreshed = [
        header,
        banner,
        chat.venue,
        chat.year,
        library.table,
        library.count,
    ]
    refresh_inputs = [chat.venue, chat.year]
    quiet: dict[str, Any] = {"api_visibility": "private", "show_progress": "hidden"}
    library.add.click(
        ingest,
        [library.files, library.skip],
        library.results,
        api_name="library_add",
        api_visibility="private",
        concurrency_limit=1,  # one writer at a time
    ).then(handlers.refresh, refresh_inputs, refreshed, api_name="library_refresh", **quiet)
    # the index may have changed (e.g. `rag ingest` elsewhere) since the app was built
    demo.load(handlers.refresh, refresh_inputs, refreshed, api_name="page_load", **quiet)


# -- serving ---------------------------------------------------------------------------------
def parse_auth(auth: str | None) -> tuple[str, str] | None:
    """``"user:pass"`` as gradio's (user, password) pair; None for no sign-in."""
    if not auth:
        return None
    user, sep, password = auth.partition(":")
    if not sep or not user or not password:
        raise ConfigError("Bad auth value; use user:pass (serve.auth or --auth).")
    return user, password


def _few_malloc_arenas(arenas: int = 2) -> None:
    """Cap glibc's malloc arenas for the threads to come. Each thread that allocates gets
    its own heap, up to 8 per core, and keeps what it freed: a server's worker threads grow
    its memory with every burst of requests (docs/deployment.md). ``MALLOC_ARENA_MAX`` set
    by the operator wins; other C libraries are left alone."""
    if os.environ.get("MALLOC_ARENA_MAX") or not sys.platform.startswith("linux"):
        return
    import ctypes

    try:
        ctypes.CDLL("libc.so.6").mallopt(-8, arenas)  # M_ARENA_MAX
    except (OSError, AttributeError):  # musl, or no glibc
        pass


def serve(
    assistant: Assistant,
    host: str | None = None,
    port: int | None = None,
    auth: str | None = None,
    *,
    block: bool = True,
    no_auth: bool = False,
) -> gr.Blocks:
    """Serve the web chat (defaults from ``assistant.settings.serve``) and print its address.

    No share link, no analytics. ``block=False`` returns the running app (``.close()`` it).
    Off loopback a sign-in is required unless ``no_auth`` (see ``ui.auth``).
    """
    os.environ.setdefault("GRADIO_ANALYTICS_ENABLED", "False")
    _few_malloc_arenas()
    from . import style
    from .auth import LoginGuard, check_exposure

    settings = assistant.settings.serve
    host, port = host or settings.host, port or settings.port
    credentials = parse_auth(auth or settings.auth)
    warning = check_exposure(host, credentials, no_auth)
    demo = build_app(assistant)
    demo.queue(default_concurrency_limit=settings.concurrency)
    try:
        demo.launch(
            server_name=host,
            server_port=port,
            auth=cast(Any, LoginGuard(*credentials).check) if credentials else None,
            share=False,
            inbrowser=False,
            prevent_thread_lock=True,
            quiet=True,
            show_error=False,
            max_file_size=settings.max_upload_mb * 1024 * 1024,
            ssr_mode=False,
            mcp_server=False,
            footer_links=["api"],
            theme=style.theme(),
            css=style.CSS,
        )
    except OSError as exc:
        raise ConfigError(f"Cannot serve on {host}:{port} ({exc}). Pass another --port.") from exc
    signin = " (sign-in required)" if credentials else ""
    print(f"Web chat on http://{host}:{port}{signin}", flush=True)
    if warning:
        print(warning, file=sys.stderr, flush=True)
    if block:
        demo.block_thread()
    return demo
