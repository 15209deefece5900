"""The chat's paper actions: a card's "Related papers" button, and the download of an
answer's papers (BibTeX, CSV or Markdown).

A card's button is plain HTML in the transcript; the transcript's script turns a click on it
into a ``related`` event carrying the paper's id, answered as a turn of the chat. The
download button holds the last answer's papers, written again after every answer.
"""

from __future__ import annotations

import tempfile
import uuid
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any

from rag import Answer, Assistant, Citation, Hit, Paper, RagError
from rag.export import answer_papers, render

from .forms import filter_kwargs
from .render import Turn

if TYPE_CHECKING:
    from .app import Handlers

# Added to the transcript's script: a click on a card's button asks for related papers.
RELATED_CLICK = """
element.addEventListener('click', (event) => {
  const button = event.target.closest('.related-btn');
  if (!button) return;
  event.preventDefault();
  trigger('related', {paper: button.dataset.paper});
});
"""
FORMATS = {"BibTeX": ("bibtex", ".bib"), "CSV": ("csv", ".csv"), "Markdown": ("markdown", ".md")}
_EXPORTS = Path(tempfile.gettempdir()) / "rag-papers-exports"


def related_answer(paper: Paper, hits: Sequence[Hit]) -> Answer:
    """The papers nearest ``paper`` as a chat answer: a line per paper, each cited."""
    lead = f'{len(hits)} papers nearest "{paper.title}" by their abstracts:'
    lines = [f"- {h.paper.title} [{n}]" for n, h in enumerate(hits, start=1)]
    return Answer(
        text="\n".join([lead, *lines]),
        grounded=True,
        query=f"related to {paper.title}",
        citations=tuple(Citation(n, h.paper) for n, h in enumerate(hits, start=1)),
        hits=tuple(hits),
        listing=True,
    )


def find_paper(turns: Sequence[Turn], paper_id: str) -> Paper | None:
    """The paper with this id among those the chat has shown."""
    for turn in reversed(turns):
        answer = turn.answer
        papers = [c.paper for c in answer.citations] if answer else []
        papers += [h.paper for h in (*(answer.hits if answer else ()), *turn.hits)]
        for paper in papers:
            if paper.paper_id == paper_id:
                return paper
    return None


def export_file(turns: Sequence[Turn], choice: str) -> Path | None:
    """The last answer's papers written in the chosen format, or None when it cites none."""
    answer = next((t.answer for t in reversed(turns) if t.answer is not None), None)
    papers = answer_papers(answer) if answer is not None and answer.grounded else []
    if not papers:
        return None
    fmt, suffix = FORMATS.get(choice, FORMATS["BibTeX"])
    folder = _EXPORTS / uuid.uuid4().hex  # one folder per file: sessions never share one
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"papers{suffix}"
    path.write_text(render(papers, fmt), encoding="utf-8")
    return path


def export_controls(gr: Any) -> SimpleNamespace:
    """The format choice and the download button, for the controls column."""
    fmt = gr.Radio(
        list(FORMATS), value="BibTeX", label="Papers of the last answer", elem_id="export-format"
    )
    download = gr.DownloadButton(
        "Download papers", value=None, interactive=False, size="sm", elem_id="download"
    )
    return SimpleNamespace(format=fmt, download=download)


def wire(
    gr: Any,
    handlers: Handlers,
    chat: SimpleNamespace,
    turns: Any,
    outputs: list[Any],
    answered: list[Any],
) -> None:
    """Related papers from a card's button; the download refreshed after every answer."""
    private = {"api_visibility": "private", "show_progress": "hidden"}

    def related(turns_: list[Turn], k: float, venue: str | None, year: str | None, evt):
        paper_id = str(evt._data.get("paper", ""))
        turn = related_turn(
            handlers.assistant, turns_, paper_id, int(k), **filter_kwargs(venue, year)
        )
        return handlers.view([*turns_, turn])

    related.__annotations__["evt"] = gr.EventData  # how gradio passes the click's data
    inputs = [turns, chat.k, chat.venue, chat.year]
    shown = chat.transcript.related(related, inputs, outputs, api_name="chat_related", **private)

    def download(turns_: list[Turn], choice: str) -> Any:
        path = export_file(turns_, choice)
        return gr.update(value=str(path) if path else None, interactive=path is not None)

    refresh = [download, [turns, chat.export.format], chat.export.download]
    for event in [*answered, shown]:
        event.then(*refresh, api_name=False, **private)
    chat.export.format.change(*refresh, api_name=False, **private)


def related_turn(
    assistant: Assistant, turns: Sequence[Turn], paper_id: str, k: int, **filters: Any
) -> Turn:
    """A chat turn holding the papers nearest ``paper_id`` (or why there are none)."""
    paper = find_paper(turns, paper_id) or next(
        (p for p in assistant.papers() if p.paper_id == paper_id), None
    )
    if paper is None:
        return Turn("Related papers", error="That paper is no longer in the index.")
    question = f"Papers related to {paper.title}"
    try:
        return Turn(question, answer=related_answer(paper, assistant.related(paper, k, **filters)))
    except RagError as exc:
        return Turn(question, error=str(exc))
