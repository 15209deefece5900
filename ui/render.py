"""Answers, sources and the library as HTML: pure functions, no gradio.

Everything that comes from outside (abstracts, titles, authors, URLs, model output) is
escaped with ``html.escape`` before it is placed in markup; the only tags in the output are
the ones written here. That is what keeps an abstract holding ``<script>`` or
``<img onerror=...>`` inert in the browser.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import groupby
from urllib.parse import urlparse

from rag import Answer, Citation, Hit, IndexStats, IngestReport, Paper

LIBRARY_HEADERS = ["Title", "Venue", "Year", "Authors", "Link"]
_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_BOLD = re.compile(r"\*\*(?=\S)(.+?)(?<=\S)\*\*")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_CONTEXT_CHARS = 180  # of abstract shown either side of the quote before "Full abstract"
_MAX_AUTHORS = 4


@dataclass(frozen=True)
class Turn:
    """One question in a chat and what came back: a streamed draft, an answer or an error."""

    question: str
    answer: Answer | None = None
    draft: str = ""
    error: str = ""


@dataclass(frozen=True)
class FileResult:
    """What ingesting one uploaded file did: its report, or the error that stopped it."""

    name: str
    report: IngestReport | None = None
    error: str = ""


# -- small pieces ------------------------------------------------------------------------------
def esc(text: object) -> str:
    """Text as HTML text: ``&``, ``<``, ``>`` and both quotes escaped."""
    return html.escape(str(text), quote=True)


def safe_url(url: str) -> str | None:
    """The URL if it is an http(s) link (never ``javascript:`` and the like), else None."""
    url = (url or "").strip()
    parsed = urlparse(url)
    return url if parsed.scheme in ("http", "https") and parsed.netloc else None


def anchor(turn: int, number: int) -> str:
    """The element id of source ``number`` of chat turn ``turn`` (both 1-based)."""
    return f"src-{turn}-{number}"


def clip(text: str, n: int) -> str:
    """At most ``n`` characters, cut at a word and marked with an ellipsis."""
    text = " ".join(text.split())
    if len(text) <= n:
        return text
    return text[:n].rsplit(" ", 1)[0].rstrip(",;:.") + "…"


def authors_text(authors: Sequence[str]) -> str:
    """The first few authors, then "et al."."""
    shown = ", ".join(authors[:_MAX_AUTHORS])
    return shown + (" et al." if len(authors) > _MAX_AUTHORS else "")


def seconds(timings: dict[str, float]) -> str:
    """How long an answer took, e.g. "1.4 s"; empty when not measured."""
    total = sum(timings.values())
    return f"{total:.1f} s" if total else ""


# -- answer text -------------------------------------------------------------------------------
def text_html(text: str, link: Callable[[int], str | None] | None = None) -> str:
    """Model output as HTML: paragraphs, bullet lists and **bold**, nothing else.

    Raw HTML in ``text`` is shown as text. ``link(n)`` gives the href for citation ``[n]``;
    markers it returns None for (or all, without ``link``) stay plain text.
    """
    blocks = [b for b in re.split(r"\n\s*\n", text.strip()) if b.strip()]
    return "".join(_block_html(b, link) for b in blocks)


def _block_html(block: str, link: Callable[[int], str | None] | None) -> str:
    """A paragraph, a list, or both: "Two papers:" then "- A", "- B" is common."""
    lines = [ln for ln in block.splitlines() if ln.strip()]
    parts = []
    for is_item, run in groupby(lines, key=lambda ln: bool(_BULLET.match(ln))):
        if is_item:
            items = "".join(f"<li>{_inline(_BULLET.sub('', ln), link)}</li>" for ln in run)
            parts.append(f"<ul>{items}</ul>")
        else:
            parts.append("<p>" + "<br>".join(_inline(ln, link) for ln in run) + "</p>")
    return "".join(parts)


def _inline(line: str, link: Callable[[int], str | None] | None) -> str:
    escaped = _BOLD.sub(r"<strong>\1</strong>", esc(line.strip()))
    if link is None:
        return escaped
    return _MARKER.sub(lambda m: _marker_html(m.group(1), link), escaped)


def _marker_html(numbers: str, link: Callable[[int], str | None]) -> str:
    parts = []
    for raw in numbers.split(","):
        n = int(raw)
        href = link(n)
        title = f"Go to source {n}"
        parts.append(f'<a href="#{esc(href)}" title="{title}">{n}</a>' if href else str(n))
    return f'<sup class="cite">[{", ".join(parts)}]</sup>'


def answer_html(answer: Answer, turn: int = 1) -> str:
    """A grounded answer: text with each ``[n]`` linked to its source card, then notes."""
    numbers = {c.number for c in answer.citations}

    def link(n: int) -> str | None:
        return anchor(turn, n) if n in numbers else None

    return (
        f'<div class="answer-text">{text_html(answer.text, link)}</div>'
        + checks_html(answer)
        + meta_html(answer)
    )


def checks_html(answer: Answer) -> str:
    """What the citation check found: removed markers and sentences no source supports."""
    notes = []
    if answer.removed_citations:
        n = answer.removed_citations
        notes.append(
            f"<p>{n} citation marker{'s' if n != 1 else ''} naming no retrieved paper "
            f"{'were' if n != 1 else 'was'} removed.</p>"
        )
    if answer.unsupported_sentences:
        items = "".join(f"<li>{esc(s)}</li>" for s in answer.unsupported_sentences)
        notes.append(f"<p>No retrieved abstract supports:</p><ul>{items}</ul>")
    if not notes:
        return ""
    return f'<div class="checks"><strong>Check these</strong>{"".join(notes)}</div>'


def meta_html(answer: Answer) -> str:
    """The line under an answer: the standalone query it searched for, backend and time."""
    parts = [f'searched for: <q class="query">{esc(answer.query)}</q>']
    if answer.backend:
        parts.append(f'<span class="how">{esc(answer.backend)}</span>')
    took = seconds(answer.timings)
    if took:
        parts.append(f'<span class="how">{took}</span>')
    return f'<div class="searched">{" · ".join(parts)}</div>'


def refusal_html(answer: Answer) -> str:
    """A refused answer, said plainly, with the search it ran."""
    return (
        '<div class="refusal"><strong>No answer from these papers.</strong> '
        f"{esc(answer.text)} The closest papers are listed alongside; rephrasing the "
        "question or widening the filters may help.</div>" + meta_html(answer)
    )


# -- sources -------------------------------------------------------------------------------------
def highlight(abstract: str, quote: str) -> str:
    """The escaped abstract with ``quote`` wrapped in ``<mark>`` where it occurs."""
    span = _find(abstract, quote)
    if span is None:
        return esc(abstract)
    start, end = span
    return _marked(abstract, start, end)


def excerpt(abstract: str, quote: str, context: int = _CONTEXT_CHARS) -> str:
    """The quote, marked, with a little of the abstract either side; the start when absent."""
    span = _find(abstract, quote)
    if span is None:
        return esc(clip(abstract, 2 * context))
    start, end = span
    before = abstract[:start]
    if len(before) > context:
        before = "…" + before[-context:].split(" ", 1)[-1]
    after = abstract[end:]
    if len(after) > context:
        after = after[:context].rsplit(" ", 1)[0] + "…"
    return esc(before) + f"<mark>{esc(abstract[start:end])}</mark>" + esc(after)


def _marked(text: str, start: int, end: int) -> str:
    return esc(text[:start]) + f"<mark>{esc(text[start:end])}</mark>" + esc(text[end:])


def _find(abstract: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` is in ``abstract``: exactly, else ignoring case and spacing."""
    quote = quote.strip()
    if not quote:
        return None
    at = abstract.find(quote)
    if at >= 0:
        return at, at + len(quote)
    pattern = r"\s+".join(re.escape(word) for word in quote.split())
    match = re.search(pattern, abstract, re.IGNORECASE)
    return match.span() if match else None


def paper_head_html(paper: Paper) -> str:
    """Title (linked when the paper has an http(s) URL), derived-title badge, venue, authors."""
    url = safe_url(paper.url)
    title = esc(paper.title)
    if url:
        title = (
            f'<a href="{esc(url)}" target="_blank" rel="noopener noreferrer">{title}'
            '<span class="ext" aria-hidden="true">↗</span></a>'
        )
    badge = (
        '<span class="badge" title="The source gave no title; this one was derived from '
        'the abstract">derived title</span>'
        if paper.title_derived
        else ""
    )
    meta = [esc(x) for x in (paper.venue_year, authors_text(paper.authors)) if x]
    meta_line = f'<div class="src-meta">{" · ".join(meta)}</div>' if meta else ""
    return f'<div class="src-title">{title}{badge}</div>{meta_line}'


def source_card_html(citation: Citation, turn: int = 1) -> str:
    """One cited paper: number, title, venue, authors, the supporting sentence marked."""
    paper = citation.paper
    return (
        f'<article class="src-card" id="{anchor(turn, citation.number)}">'
        f'<div class="src-num">{citation.number}</div><div class="src-body">'
        + paper_head_html(paper)
        + f'<p class="src-excerpt">{excerpt(paper.abstract, citation.quote)}</p>'
        + "<details><summary>Full abstract</summary>"
        + f'<p class="src-abstract">{highlight(paper.abstract, citation.quote)}</p></details>'
        + "</div></article>"
    )


def source_cards_html(citations: Sequence[Citation], turn: int = 1) -> str:
    """The cards of an answer's cited papers, in citation order."""
    if not citations:
        return '<p class="muted">No paper was cited.</p>'
    return "".join(source_card_html(c, turn) for c in citations)


def closest_papers_html(hits: Sequence[Hit], limit: int = 5) -> str:
    """The papers a refused question came closest to, with their best-matching text."""
    if not hits:
        return '<p class="muted">No paper came close.</p>'
    cards = []
    for hit in hits[:limit]:
        text = hit.evidence[0] if hit.evidence else hit.paper.abstract
        cards.append(
            '<article class="src-card near"><div class="src-body">'
            + paper_head_html(hit.paper)
            + f'<p class="src-excerpt">{esc(clip(text, 260))}</p></div></article>'
        )
    return "".join(cards)


# -- the chat ----------------------------------------------------------------------------------
def turn_html(turn: Turn, number: int) -> str:
    """One question with its answer beside its sources (or a draft, or an error)."""
    question = f'<div class="question"><span class="who">You</span>{esc(turn.question)}</div>'
    answer, aside = _turn_parts(turn, number)
    done = ' data-done="1"' if turn.answer or turn.error else ""
    return (
        f'<section class="turn" id="turn-{number}"{done}>{question}<div class="turn-body">'
        f'<div class="answer">{answer}</div><aside class="sources">{aside}</aside>'
        "</div></section>"
    )


def _turn_parts(turn: Turn, number: int) -> tuple[str, str]:
    if turn.error:
        return f'<div class="error"><strong>Could not answer.</strong> {esc(turn.error)}</div>', ""
    a = turn.answer
    if a is None:
        draft = text_html(turn.draft) if turn.draft else ""
        working = '<span class="working">Searching the papers…</span>'
        if turn.draft:
            working = '<span class="working">Writing…</span>'
        return f'<div class="answer-text draft">{draft}</div>{working}', ""
    if not a.grounded:
        return refusal_html(a), _aside("Closest papers", closest_papers_html(a.hits))
    n = len(a.citations)
    title = f"Sources · {n} paper{'s' if n != 1 else ''}"
    return answer_html(a, number), _aside(title, source_cards_html(a.citations, number))


def _aside(title: str, body: str) -> str:
    return f'<h4 class="aside-title">{esc(title)}</h4>{body}'


def transcript_html(turns: Sequence[Turn]) -> str:
    """The whole chat, oldest first; what can be asked when there is nothing yet."""
    if not turns:
        return f'<div class="empty-chat">{INTRO}</div>'
    return "".join(turn_html(t, i) for i, t in enumerate(turns, 1))


# The same for every index, so that nothing has to re-render it when the index changes.
INTRO = (
    "<h3>Ask about the indexed papers</h3>"
    "<p>Answers are drawn only from the abstracts and cite them: each "
    '<sup class="cite">[n]</sup> leads to its source card, with the supporting sentence '
    "highlighted. Follow-up questions are understood in context.</p>"
)


# -- page chrome ---------------------------------------------------------------------------------
def header_html(stats: IndexStats | None) -> str:
    """The page title and a one-line summary of the index."""
    summary, where = "no index yet", ""
    if stats is not None:
        named = [v for v in stats.venues if v != "?"]  # "?" counts papers without a venue
        venues = ", ".join(named[:3]) + (" …" if len(named) > 3 else "")
        parts = [f"{stats.papers} papers", venues, _year_range(stats.years)]
        summary = esc(" · ".join(p for p in parts if p))
        where = f' title="Index: {esc(stats.location)}"'
    return (
        '<header class="app-header"><div><h1>Paper Q&amp;A</h1>'
        "<p>Questions answered from research-paper abstracts, every claim cited.</p></div>"
        f'<div class="index-summary"{where}>{summary}</div></header>'
    )


def _year_range(years: dict[int, int]) -> str:
    if not years:
        return ""
    first, last = min(years), max(years)
    return str(first) if first == last else f"{first}–{last}"


def banner_html(problem: str) -> str:
    """A notice that the index cannot be searched yet, and what to do about it."""
    if not problem:
        return ""
    return (
        '<div class="banner"><strong>No papers to search yet.</strong> Upload paper lists in '
        "the <b>Library</b> tab, or run <code>rag ingest --bundled</code> and reload this "
        f'page.<div class="banner-detail">{esc(problem)}</div></div>'
    )


# -- the library ---------------------------------------------------------------------------------
def library_rows(papers: Sequence[Paper]) -> list[list[str]]:
    """One row per indexed paper, as plain text cells (the table shows them as text)."""
    return [
        [
            paper.label,
            paper.venue,
            str(paper.year or ""),
            authors_text(paper.authors),
            safe_url(paper.url) or "",
        ]
        for paper in papers
    ]


def ingest_results_html(results: Sequence[FileResult]) -> str:
    """A table with one row per uploaded file: what was added, duplicated or skipped, or why
    the file was refused."""
    if not results:
        return ""
    rows = "".join(_result_row(r) for r in results)
    return (
        '<table class="ingest-results"><thead><tr><th>File</th><th>Result</th></tr></thead>'
        f"<tbody>{rows}</tbody></table>"
    )


def _result_row(result: FileResult) -> str:
    name = f"<td class='file'>{esc(result.name)}</td>"
    if result.report is None:
        why = f"<td><strong>Not added.</strong> {esc(result.error)}</td>"
        return f"<tr class='failed'>{name}{why}</tr>"
    r = result.report
    counts = [
        (r.added, "added"),
        (r.updated, "updated"),
        (r.unchanged, "unchanged"),
        (r.duplicates, "duplicates"),
        (len(r.skipped), "skipped"),
    ]
    summary = ", ".join(f"{n} {label}" for n, label in counts if n) or "nothing new"
    skipped = "".join(f"<li>{esc(where)}: {esc(why)}</li>" for where, why in r.skipped[:10])
    if len(r.skipped) > 10:
        skipped += f"<li>… and {len(r.skipped) - 10} more</li>"
    details = f"<ul class='skipped'>{skipped}</ul>" if skipped else ""
    return f"<tr class='ok'>{name}<td>{esc(summary)}{details}</td></tr>"
