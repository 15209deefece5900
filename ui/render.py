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
from urllib.parse import quote_plus

from rag import Answer, Citation, Hit, IndexStats, IngestReport, Paper
from rag.text.markup import Node, parse, readable
from rag.text.sanitize import web_link
from rag.types import Stage, YearCount

LIBRARY_HEADERS = ["Title", "Venue", "Year", "Authors", "Link"]
SEARCH_URL = "https://scholar.google.com/scholar?q="
_MARKER = re.compile(r"\[(\d+(?:\s*,\s*\d+)*)\]")
_BULLET = re.compile(r"^\s*(?:[-*•]|\d+[.)])\s+")
_CLI_SKIP = re.compile(r"pass --skip-invalid")
_SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=\S)")
_CONTEXT_CHARS = 240  # a neighbouring sentence this long or shorter is shown with the quote
_MAX_AUTHORS = 4
# what a span of parsed markup becomes; everything inside is escaped text or more of these
_TAGS = {"math": 'span class="math"', "var": "i", "sup": "sup", "sub": "sub"}
_TAGS |= {"em": "em", "strong": "strong"}


@dataclass(frozen=True)
class Turn:
    """One question in a chat and what came back: a streamed draft, an answer or an error.

    While the answer is made, ``stage`` says what it is doing and ``hits`` are the papers
    it is read from (shown as soon as the search is done).
    """

    question: str
    answer: Answer | None = None
    draft: str = ""
    error: str = ""
    stage: Stage = "searching"
    hits: tuple[Hit, ...] = ()


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
    return web_link((url or "").strip()) or None


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
    return markup_html(line.strip(), link)


def markup_html(text: str, link: Callable[[int], str | None] | None = None) -> str:
    """``text`` with its LaTeX and Markdown rendered (math, emphasis, links) and everything
    else escaped; ``link`` as for ``text_html``."""
    return _nodes_html(parse(text), link)


def _nodes_html(nodes: Sequence[Node], link: Callable[[int], str | None] | None) -> str:
    return "".join(_node_html(node, link) for node in nodes)


def _node_html(node: Node, link: Callable[[int], str | None] | None) -> str:
    if isinstance(node, str):
        escaped = esc(node)
        return _MARKER.sub(lambda m: _marker_html(m.group(1), link), escaped) if link else escaped
    inner = _nodes_html(node.children, link if node.kind != "link" else None)
    if node.kind == "link":
        url = safe_url(node.href)
        return f"<a {_external(url)}>{inner}</a>" if url else inner
    tag = _TAGS[node.kind]
    return f"<{tag}>{inner}</{tag.split()[0]}>"


def _external(url: str) -> str:
    return f'href="{esc(url)}" target="_blank" rel="noopener noreferrer"'


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

    body = list_html(answer.text, link) if answer.listing else text_html(answer.text, link)
    chart = chart_html(answer.series) if answer.series else ""
    return f'<div class="answer-text">{chart}{body}</div>' + checks_html(answer) + meta_html(answer)


def chart_html(series: Sequence[YearCount], width: int = 560, height: int = 220) -> str:
    """A trend's counts as an SVG bar chart: each year's share of the papers indexed that
    year (the count on the bar), and a year with no paper indexed marked as a gap."""
    left, right, top, bottom = 52, 8, 16, 36
    plot_w, plot_h = width - left - right, height - top - bottom
    peak = max((y.share or 0.0 for y in series), default=0.0) or 1.0
    step = plot_w / max(len(series), 1)
    every = max(1, round(len(series) / 12))  # at most ~12 year labels
    parts = [
        f'<line x1="{left}" y1="{top + plot_h}" x2="{width - right}" y2="{top + plot_h}" '
        'stroke="#94a3b8"/>',
        f'<line x1="{left}" y1="{top}" x2="{left}" y2="{top + plot_h}" stroke="#94a3b8"/>',
        f'<text x="{left - 4}" y="{top + 4}" text-anchor="end" font-size="10">{peak:.1%}</text>',
        f'<text x="{left - 4}" y="{top + plot_h}" text-anchor="end" font-size="10">0%</text>',
        f'<text x="14" y="{top + plot_h / 2}" font-size="10" text-anchor="middle" '
        f'transform="rotate(-90 14 {top + plot_h / 2})">share of the year\'s papers</text>',
        f'<text x="{left + plot_w / 2}" y="{height - 4}" font-size="10" '
        'text-anchor="middle">year</text>',
    ]
    for i, y in enumerate(series):
        x = left + i * step
        label_x = x + step / 2
        if not y.total:
            parts.append(
                f'<text x="{label_x:.1f}" y="{top + plot_h - 4}" font-size="9" fill="#94a3b8" '
                f'text-anchor="middle"><title>{y.year}: no paper indexed</title>none indexed</text>'
            )
        else:
            h = plot_h * (y.share or 0.0) / peak
            parts.append(
                f'<rect class="bar" x="{x + step * 0.15:.1f}" y="{top + plot_h - h:.1f}" '
                f'width="{step * 0.7:.1f}" height="{h:.1f}" fill="#3b82f6">'
                f"<title>{y.year}: {y.count} of {y.total} papers ({y.share:.1%})</title></rect>"
                f'<text x="{label_x:.1f}" y="{top + plot_h - h - 3:.1f}" font-size="9" '
                f'text-anchor="middle" fill="#334155">{y.count}</text>'
            )
        if i % every == 0:
            parts.append(
                f'<text x="{label_x:.1f}" y="{top + plot_h + 14}" font-size="10" '
                f'text-anchor="middle">{y.year}</text>'
            )
    label = "Papers on the topic per year, as a share of all papers indexed that year"
    return (
        f'<figure class="trend-chart"><svg role="img" aria-label="{label}" '
        f'viewBox="0 0 {width} {height}" width="100%" style="max-width:{width}px">'
        + "".join(parts)
        + f"</svg><figcaption>{label}; hover a bar for its count.</figcaption></figure>"
    )


LIST_PAGE = 10  # papers shown at once in a list answer; each further page opens on a click


def list_html(text: str, link: Callable[[int], str | None] | None = None) -> str:
    """A list answer: its count, the first ``LIST_PAGE`` papers, then a closed section per
    further page ("Papers 11–20 of 57")."""
    lead, *items = [ln for ln in text.splitlines() if ln.strip()]
    html_ = f"<p>{_inline(lead, link)}</p>" if lead else ""
    pages = [items[i : i + LIST_PAGE] for i in range(0, len(items), LIST_PAGE)]
    for n, page in enumerate(pages):
        body = "<ul>" + "".join(f"<li>{_inline(_BULLET.sub('', ln), link)}</li>" for ln in page)
        body += "</ul>"
        if n:
            first = n * LIST_PAGE + 1
            summary = f"Papers {first}–{first + len(page) - 1} of {len(items)}"
            body = f'<details class="list-page"><summary>{summary}</summary>{body}</details>'
        html_ += body
    return html_


def checks_html(answer: Answer) -> str:
    """What the check took out of the answer: a muted line, opened for each statement and
    why it went, and how many citation markers named no retrieved paper."""
    notes = []
    if answer.removed:
        n = len(answer.removed)
        items = "".join(
            f'<li><span class="statement">{markup_html(r.statement)}</span>'
            f' <span class="reason">— {esc(r.reason)}</span></li>'
            for r in answer.removed
        )
        notes.append(
            f"<details><summary>{n} statement{'s' if n != 1 else ''} removed: not supported "
            f"by the cited abstracts</summary><ul>{items}</ul></details>"
        )
    if answer.removed_citations:
        n = answer.removed_citations
        notes.append(
            f"<p>{n} citation marker{'s' if n != 1 else ''} naming no retrieved paper "
            f"{'were' if n != 1 else 'was'} removed.</p>"
        )
    return f'<div class="checks">{"".join(notes)}</div>' if notes else ""


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
        "question or widening the filters may help.</div>" + checks_html(answer) + meta_html(answer)
    )


# -- sources -------------------------------------------------------------------------------------
def highlight(abstract: str, quote: str) -> str:
    """The abstract as HTML with ``quote`` wrapped in ``<mark>`` where it occurs."""
    span = _find(abstract, quote)
    if span is None:
        return markup_html(abstract)
    start, end = span
    return _marked(abstract, start, end)


def abstract_html(abstract: str, quote: str) -> str:
    """The abstract, once: the supporting sentence marked, with a sentence of context either
    side; the rest is hidden until "Whole abstract" is opened (CSS, no script)."""
    span = _find(abstract, quote)
    start, end = _window(abstract, span)
    shown = abstract[start:end]
    body = _marked(shown, span[0] - start, span[1] - start) if span else markup_html(shown)
    head, tail = abstract[:start], abstract[end:]
    if not head.strip() and not tail.strip():
        return f'<p class="src-abstract">{body}</p>'
    if head.strip():
        body = f'<span class="more">{markup_html(head)}</span><span class="gap">… </span>' + body
    if tail.strip():
        body += f'<span class="gap"> …</span><span class="more">{markup_html(tail)}</span>'
    # before the paragraph, so that CSS can show the hidden parts when it is open
    toggle = '<details class="whole"><summary>Whole abstract</summary></details>'
    return f'{toggle}<p class="src-abstract">{body}</p>'


def _window(abstract: str, span: tuple[int, int] | None) -> tuple[int, int]:
    """Where the shown part of an abstract starts and ends: the quote's sentences with a
    short neighbour either side, or the first sentences when there is no quote."""
    sentences = _sentences(abstract)
    if span is None:
        end = 0
        for _, stop in sentences:
            if end and stop > 2 * _CONTEXT_CHARS:
                break
            end = stop
        return 0, end or len(abstract)
    first = next((i for i, (_, stop) in enumerate(sentences) if stop > span[0]), 0)
    last = max(i for i, (begin, _) in enumerate(sentences) if i == 0 or begin < span[1])
    start, end = sentences[first][0], sentences[last][1]
    if first > 0 and _length(sentences[first - 1]) <= _CONTEXT_CHARS:
        start = sentences[first - 1][0]
    if last + 1 < len(sentences) and _length(sentences[last + 1]) <= _CONTEXT_CHARS:
        end = sentences[last + 1][1]
    return min(start, span[0]), max(end, span[1])


def _sentences(text: str) -> list[tuple[int, int]]:
    """Where each sentence of ``text`` starts and ends (a full stop and a space end one)."""
    starts = [0, *(m.end() for m in _SENTENCE_END.finditer(text))]
    ends = [m.start() for m in _SENTENCE_END.finditer(text)] + [len(text.rstrip())]
    return list(zip(starts, ends, strict=True))


def _length(span: tuple[int, int]) -> int:
    return span[1] - span[0]


def _marked(text: str, start: int, end: int) -> str:
    return (
        markup_html(text[:start])
        + f"<mark>{markup_html(text[start:end])}</mark>"
        + markup_html(text[end:])
    )


def _find(abstract: str, quote: str) -> tuple[int, int] | None:
    """Where ``quote`` is in ``abstract``: exactly, else ignoring case and spacing, else the
    sentences that read the same once LaTeX is written out (a quote may be readable text)."""
    quote = quote.strip()
    if not quote:
        return None
    at = abstract.find(quote)
    if at >= 0:
        return at, at + len(quote)
    pattern = r"\s+".join(re.escape(word) for word in quote.split())
    match = re.search(pattern, abstract, re.IGNORECASE)
    if match:
        return match.span()
    return _find_readable(abstract, quote)


def _find_readable(abstract: str, quote: str) -> tuple[int, int] | None:
    wanted = _letters(quote)
    if not wanted:
        return None
    sentences = _sentences(abstract)
    for last in range(len(sentences)):  # the first sentence that completes the quote...
        for first in range(last, -1, -1):  # ...and the latest one it can start in
            start, end = sentences[first][0], sentences[last][1]
            if wanted in _letters(abstract[start:end]):
                return start, end
    return None


def _letters(text: str) -> str:
    return re.sub(r"\W+", "", readable(text).lower())


def paper_head_html(paper: Paper) -> str:
    """Title (linked when the paper has an http(s) URL, else a marked search for it),
    derived-title badge, venue and authors."""
    url = safe_url(paper.url)
    title = markup_html(paper.title)
    if url:
        title = f'<a {_external(url)}>{title}<span class="ext" aria-hidden="true">↗</span></a>'
    badge = (
        '<span class="badge" title="The source gave no title; this one was derived from '
        'the abstract">derived title</span>'
        if paper.title_derived
        else ""
    )
    meta = [esc(x) for x in (paper.venue_year, authors_text(paper.authors)) if x]
    if not url:
        meta.append(search_link_html(paper))
    meta_line = f'<div class="src-meta">{" · ".join(meta)}</div>' if meta else ""
    return f'<div class="src-title">{title}{badge}</div>{meta_line}'


def search_url(paper: Paper) -> str:
    """A Google Scholar search for a paper the index has no link for: its title in quotes,
    or, for a derived title, the title's words and the abstract's first sentence."""
    title = readable(paper.title)
    if not paper.title_derived:
        return SEARCH_URL + quote_plus(f'"{title}"')
    first = readable(_first_sentence(paper.abstract))
    return SEARCH_URL + quote_plus(clip(f"{title} {first}", 250).rstrip("…"))


def _first_sentence(text: str) -> str:
    spans = _sentences(text)
    return text[: spans[0][1]] if spans else text


def search_link_html(paper: Paper) -> str:
    """A link that searches for the paper, marked as a search, not as the paper."""
    what = "the title and first sentence" if paper.title_derived else "the title"
    return (
        f'<a class="find" {_external(search_url(paper))} title="Search Google Scholar for '
        f'{what}; this index has no link to the paper">search for paper'
        '<span class="ext" aria-hidden="true">↗</span></a>'
    )


def source_card_html(citation: Citation, turn: int = 1) -> str:
    """One cited paper: number, title, venue, authors, and its abstract once, with the
    supporting sentence marked; a button asks for its related papers."""
    paper = citation.paper
    return (
        f'<article class="src-card" id="{anchor(turn, citation.number)}">'
        f'<div class="src-num">{citation.number}</div><div class="src-body">'
        + paper_head_html(paper)
        + abstract_html(paper.abstract, citation.quote)
        + related_button_html(paper)
        + "</div></article>"
    )


def related_button_html(paper: Paper) -> str:
    """A button the page turns into a "related papers" request for this paper."""
    return (
        f'<button type="button" class="related-btn" data-paper="{esc(paper.paper_id)}" '
        f'title="Papers nearest this one by their abstracts">Related papers</button>'
    )


def source_cards_html(citations: Sequence[Citation], turn: int = 1) -> str:
    """The cards of an answer's cited papers, in citation order."""
    if not citations:
        return '<p class="muted">No paper was cited.</p>'
    return "".join(source_card_html(c, turn) for c in citations)


def hit_cards_html(hits: Sequence[Hit], limit: int = 5, empty: str = "No paper came close.") -> str:
    """Papers found for a question (before an answer cites any, or when none answers it),
    each with its best-matching passage."""
    if not hits:
        return f'<p class="muted">{esc(empty)}</p>'
    cards = []
    for hit in hits[:limit]:
        text = hit.evidence[0] if hit.evidence else hit.paper.abstract
        cards.append(
            '<article class="src-card near"><div class="src-body">'
            + paper_head_html(hit.paper)
            + f'<p class="src-abstract">{esc(clip(readable(text), 260))}</p>'
            + related_button_html(hit.paper)
            + "</div></article>"
        )
    return "".join(cards)


def closest_papers_html(hits: Sequence[Hit], limit: int = 5) -> str:
    """The papers a refused question came closest to, with their best-matching text."""
    return hit_cards_html(hits, limit)


# -- the chat ----------------------------------------------------------------------------------
def turn_html(turn: Turn, number: int) -> str:
    """One question with its answer beside its sources (or progress, or an error)."""
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
        return _progress_parts(turn)
    if not a.grounded:
        return refusal_html(a), _aside("Closest papers", closest_papers_html(a.hits))
    n = len(a.citations)
    title = f"Sources · {n} paper{'s' if n != 1 else ''}"
    return answer_html(a, number), _aside(title, source_cards_html(a.citations, number))


def progress_text(turn: Turn) -> str:
    """What an unfinished answer is doing: searching, reading N papers, writing."""
    if turn.draft or turn.stage == "writing":
        return "Writing the answer, checking each statement…"
    if turn.stage == "searching":
        return "Searching the papers…"
    n = len(turn.hits)
    return f"Reading {n} paper{'s' if n != 1 else ''}…" if n else "No paper is close enough…"


def _progress_parts(turn: Turn) -> tuple[str, str]:
    draft = f'<div class="answer-text draft">{text_html(turn.draft)}</div>' if turn.draft else ""
    working = f'<div class="working" data-stage="{turn.stage}">{progress_text(turn)}</div>'
    if turn.stage == "searching":
        return draft + working, ""
    n = len(turn.hits)
    title = f"Reading · {n} paper{'s' if n != 1 else ''}"
    return draft + working, _aside(title, hit_cards_html(turn.hits, empty="None found."))


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
        parts = [f"{stats.papers} papers", venues, _year_range(stats.years), _missing(stats)]
        summary = esc(" · ".join(p for p in parts if p))
        where = f' title="Index: {esc(stats.location)}"'
    return (
        '<header class="app-header"><div><h1>Paper Q&amp;A</h1>'
        "<p>Questions answered from research-paper abstracts, every claim cited.</p></div>"
        f'<div class="index-summary"{where}>{summary}</div></header>'
    )


def _missing(stats: IndexStats) -> str:
    """How many papers the venue and year filters cannot find, e.g. "2 without venue or
    year"."""
    no_venue = stats.venues.get("?", 0)
    no_year = stats.papers - sum(stats.years.values())
    if no_venue == no_year:
        return f"{no_venue} without venue or year" if no_venue else ""
    counts = [(no_venue, "venue"), (no_year, "year")]
    return ", ".join(f"{n} without {what}" for n, what in counts if n)


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
            readable(paper.label),
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


def web_wording(message: str) -> str:
    """A library message with the command-line option it names told as this page's control."""
    return _CLI_SKIP.sub("tick “Skip invalid records”", message)


def _result_row(result: FileResult) -> str:
    name = f"<td class='file'>{esc(result.name)}</td>"
    if result.report is None:
        why = f"<td><strong>Not added.</strong> {esc(web_wording(result.error))}</td>"
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
