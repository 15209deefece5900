"""The Topics tab: a map of a venue's papers, coloured by theme, and the themes as lists.

The map is an SVG drawn here from ``Assistant.topics`` (each paper at its 2-D place, its
title on hover); a click on a theme, on the map or in the list, shows its papers. Clicks
and hovers are handled in the page (``TOPICS_JS``): the map holds every list it can show.
Every text from a paper is escaped (``ui.render.esc``).
"""

from __future__ import annotations

from collections.abc import Sequence
from types import SimpleNamespace
from typing import Any

from rag import Assistant, RagError, Topic
from rag.text.markup import readable

from .render import clip, esc

WIDTH, HEIGHT, MARGIN = 720, 460, 24
MAX_DOTS = 3000  # papers drawn on the map; the lists hold more
MAX_LISTED = 200  # papers listed per theme
PALETTE = (
    "#2563eb", "#dc2626", "#059669", "#d97706", "#7c3aed", "#db2777", "#0891b2", "#65a30d",
    "#9333ea", "#ea580c", "#0d9488", "#4f46e5", "#be123c", "#15803d", "#a16207", "#475569",
)  # fmt: skip

TOPICS_JS = """
const tip = () => element.querySelector('.map-tip');
element.addEventListener('click', (event) => {
  const hit = event.target.closest('[data-topic]');
  if (!hit) return;
  const id = hit.dataset.topic;
  element.querySelectorAll('.topic-papers').forEach((d) => { d.hidden = d.dataset.topic !== id; });
  element.querySelectorAll('[data-topic]').forEach((x) => {
    x.classList.toggle('selected', x.dataset.topic === id);
  });
});
element.addEventListener('mouseover', (event) => {
  const dot = event.target.closest('.dot');
  const box = tip();
  if (!box) return;
  box.textContent = dot ? dot.dataset.title : '';
  box.hidden = !dot;
});
"""

TOPICS_CSS = """
.topics-view { display: grid; grid-template-columns: minmax(0, 3fr) minmax(220px, 2fr); gap: 16px; }
.topics-map { position: relative; background: #fff; border: 1px solid #e2e8f0; border-radius: 8px; }
.topics-map svg { width: 100%; height: auto; display: block; }
.topics-map .dot { cursor: pointer; opacity: .8; }
.topics-map .dot:hover, .topics-map .dot.selected { opacity: 1; stroke: #0f172a; stroke-width: 1; }
.topics-map .map-label { font: 600 12px system-ui, sans-serif; fill: #0f172a; cursor: pointer;
  paint-order: stroke; stroke: #fff; stroke-width: 3px; }
.map-tip { position: absolute; left: 8px; bottom: 8px; right: 8px; background: #0f172aee;
  color: #fff; font-size: .82rem; padding: 4px 8px; border-radius: 6px; }
.map-note { color: #64748b; font-size: .8rem; padding: 4px 8px; }
.topic-list { list-style: none; margin: 0; padding: 0; }
.topic-list li { margin: 0 0 6px; }
.topic-list button { all: unset; cursor: pointer; display: flex; gap: 8px; align-items: baseline; }
.topic-list button.selected .topic-name { text-decoration: underline; }
.swatch { width: 10px; height: 10px; border-radius: 50%; flex: none; }
.topic-name { font-weight: 600; color: #0f172a; }
.topic-size { color: #64748b; font-size: .85rem; }
.topic-terms { color: #64748b; font-size: .8rem; margin-left: 18px; }
.topic-papers { margin-top: 12px; background: #fff; border: 1px solid #e2e8f0; border-radius: 8px;
  padding: 8px 12px; }
.topic-papers h4 { margin: 0 0 6px; }
.topic-papers ol { margin: 0; padding-left: 20px; font-size: .9rem; }
.topics-empty { color: #64748b; }
"""


def colour(topic_id: int) -> str:
    return PALETTE[topic_id % len(PALETTE)]


def _xy(point: tuple[float, float]) -> tuple[float, float]:
    x, y = point
    return (
        MARGIN + (x + 1) / 2 * (WIDTH - 2 * MARGIN),
        MARGIN + (1 - (y + 1) / 2) * (HEIGHT - 2 * MARGIN),
    )


def _drawn(topics: Sequence[Topic]) -> list[tuple[Topic, int]]:
    """(topic, how many of its papers the map draws): all, or a share of ``MAX_DOTS``."""
    total = sum(t.size for t in topics)
    share = min(1.0, MAX_DOTS / total) if total else 1.0
    return [(t, max(1, round(t.size * share))) for t in topics]


LABEL_CHARS = 40  # a map label is cut to this many characters
_CHAR_WIDTH = 6.8  # px per character of the 12px label font (a wide average)
_LINE = 16.0  # px between two labels stacked to keep them apart


def place_labels(
    centres: Sequence[tuple[float, float]], texts: Sequence[str]
) -> list[tuple[float, float]]:
    """Where each label goes (its text's centre, baseline): near its theme's centre, inside
    the map, and clear of the labels placed before it (larger themes first), moved up or
    down a line at a time."""
    placed: list[tuple[float, float, float, float]] = []
    spots = []
    for (cx, cy), text in zip(centres, texts, strict=True):
        half = min(len(text) * _CHAR_WIDTH, WIDTH - 8) / 2
        x = min(max(cx, 4 + half), WIDTH - 4 - half)
        y = cy
        for step in range(0, 40):
            offset = (step + 1) // 2 * _LINE * (1 if step % 2 else -1)
            y = min(max(cy + offset, 14.0), HEIGHT - 4.0)
            box = (x - half, y - 12, x + half, y + 3)
            if not any(_overlap(box, other) for other in placed):
                break
        placed.append((x - half, y - 12, x + half, y + 3))
        spots.append((x, y))
    return spots


def _overlap(a: tuple[float, ...], b: tuple[float, ...]) -> bool:
    return a[0] < b[2] and b[0] < a[2] and a[1] < b[3] and b[1] < a[3]


def map_svg(topics: Sequence[Topic]) -> str:
    """The papers as dots at their places, coloured by theme, each theme named near its
    centre (labels kept inside the map and apart: ``place_labels``)."""
    dots, labels = [], []
    drawn = _drawn(topics)
    texts = [clip(readable(topic.label), LABEL_CHARS) for topic, _ in drawn]
    spots = place_labels([_xy(_centre(topic.points)) for topic, _ in drawn], texts)
    for (topic, n), text, (cx, cy) in zip(drawn, texts, spots, strict=True):
        fill = colour(topic.topic_id)
        for paper, point in zip(topic.papers[:n], topic.points[:n], strict=True):
            x, y = _xy(point)
            title = esc(readable(paper.title))
            dots.append(
                f'<circle class="dot" data-topic="{topic.topic_id}" data-title="{title}" '
                f'cx="{x:.1f}" cy="{y:.1f}" r="4" fill="{fill}"><title>{title}</title></circle>'
            )
        labels.append(
            f'<text class="map-label" data-topic="{topic.topic_id}" x="{cx:.1f}" y="{cy:.1f}" '
            f'text-anchor="middle">{esc(text)}</text>'
        )
    return (
        f'<svg viewBox="0 0 {WIDTH} {HEIGHT}" role="img" aria-label="Map of the papers by theme">'
        + "".join(dots)
        + "".join(labels)
        + "</svg>"
    )


def _centre(points: Sequence[tuple[float, float]]) -> tuple[float, float]:
    return (sum(p[0] for p in points) / len(points), sum(p[1] for p in points) / len(points))


def theme_list_html(topics: Sequence[Topic]) -> str:
    """The themes, largest first, with their sizes and terms; each a button."""
    items = []
    for t in topics:
        plural = "s" if t.size != 1 else ""
        items.append(
            f'<li><button class="topic" data-topic="{t.topic_id}">'
            f'<span class="swatch" style="background:{colour(t.topic_id)}"></span>'
            f'<span class="topic-name">{esc(readable(t.label))}</span>'
            f'<span class="topic-size">{t.size} paper{plural}</span></button>'
            f'<div class="topic-terms">{esc(", ".join(readable(x) for x in t.terms[:6]))}</div>'
            "</li>"
        )
    return f'<ul class="topic-list">{"".join(items)}</ul>'


def papers_html(topic: Topic) -> str:
    """A theme's papers, most central first (hidden until the theme is clicked)."""
    rows = "".join(
        f"<li>{esc(readable(p.label))} <span class='topic-size'>{esc(p.venue_year)}</span></li>"
        for p in topic.papers[:MAX_LISTED]
    )
    more = topic.size - MAX_LISTED
    tail = f"<p class='topic-size'>and {more:,} more</p>" if more > 0 else ""
    return (
        f'<div class="topic-papers" data-topic-list="{topic.topic_id}" '
        f'data-topic="{topic.topic_id}" hidden><h4>{esc(readable(topic.label))} '
        f"({topic.size} papers)</h4><ol>{rows}</ol>{tail}</div>"
    )


def topics_html(topics: Sequence[Topic], where: str = "") -> str:
    """The whole view: the map, the themes, and each theme's papers (one shown at a time)."""
    if not topics:
        return '<p class="topics-empty">No indexed papers match.</p>'
    total = sum(t.size for t in topics)
    drawn = sum(n for _, n in _drawn(topics))
    note = f"{total:,} {where}papers in {len(topics)} themes"
    if drawn < total:
        note += f"; the map shows {drawn:,} of them"
    note += ". Click a theme to list its papers."
    return (
        '<div class="topics-view"><div class="topics-map">'
        + map_svg(topics)
        + '<div class="map-tip" hidden></div>'
        + f'<div class="map-note">{esc(note)}</div></div>'
        + f"<div>{theme_list_html(topics)}{''.join(papers_html(t) for t in topics)}</div>"
        + "</div>"
    )


# -- the tab ---------------------------------------------------------------------------------
def show(assistant: Assistant, venue: str | None, year: str | None) -> str:
    """The view for a venue and year ("" for all), or what went wrong, as HTML."""
    chosen_year = int(year) if year not in (None, "") else None
    try:
        topics = assistant.topics(venue or None, chosen_year)
    except RagError as exc:
        return f'<p class="topics-empty">{esc(str(exc))}</p>'
    where = " ".join(str(x) for x in (venue, chosen_year) if x)
    return topics_html(topics, f"{where} " if where else "")


def build_tab(
    gr: Any,
    assistant: Assistant,
    venues: list[tuple[str, str]],
    years: list[tuple[str, str]],
) -> SimpleNamespace:
    """The tab's controls and view, wired: choosing a venue or year draws its themes."""
    with gr.Row(equal_height=True):
        venue = gr.Dropdown(venues, value="", label="Venue", elem_id="topics-venue", scale=2)
        year = gr.Dropdown(years, value="", label="Year", elem_id="topics-year", scale=1)
        draw = gr.Button("Show themes", variant="primary", elem_id="topics-show", scale=0)
    view = gr.HTML(
        '<p class="topics-empty">Choose a venue and year, then Show themes.</p>',
        elem_id="topics",
        js_on_load=TOPICS_JS,
        css_template=TOPICS_CSS,
        apply_default_css=False,
    )

    def shown(v: str | None, y: str | None) -> str:
        return show(assistant, v, y)

    quiet = {"api_visibility": "private", "show_progress": "minimal"}
    draw.click(shown, [venue, year], view, api_name="topics_show", **quiet)
    return SimpleNamespace(venue=venue, year=year, draw=draw, view=view)
