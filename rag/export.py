"""Papers out as BibTeX, CSV or Markdown: an answer's cited papers, a list, any papers.

    from rag.export import to_bibtex, write
    text = to_bibtex(answer_papers(answer))
    write(papers, "out.csv")            # the format from the suffix: .bib, .csv, .md

A title derived from the abstract (``Paper.title_derived``) is never exported as the paper's
title: BibTeX gives it in ``title`` as "[derived title] ..." with a ``note`` saying so, CSV
in its own ``title_derived`` column beside the marked title, Markdown marks it as the chat
does.
"""

from __future__ import annotations

import csv
import io
import re
import unicodedata
from collections.abc import Iterable, Sequence
from pathlib import Path

from .errors import InputError
from .types import Answer, Paper

FORMATS = {".bib": "bibtex", ".bibtex": "bibtex", ".csv": "csv", ".md": "markdown"}
CSV_COLUMNS = [
    "id",
    "title",
    "title_derived",
    "authors",
    "venue",
    "year",
    "url",
    "keywords",
    "abstract",
]
DERIVED_NOTE = "Title derived from the abstract; the source gives none."


def answer_papers(answer: Answer) -> list[Paper]:
    """The papers an answer cites (a list answer: the papers it lists), in citation order."""
    return [c.paper for c in answer.citations]


def to_bibtex(papers: Iterable[Paper]) -> str:
    """One ``@inproceedings`` (``@misc`` without a venue) entry per paper, keys unique."""
    entries, keys = [], set[str]()
    for paper in papers:
        key = _unique(_key(paper), keys)
        keys.add(key)
        entries.append(_entry(paper, key))
    return "\n".join(entries)


def _entry(paper: Paper, key: str) -> str:
    fields = {
        "title": _title(paper),
        "author": " and ".join(paper.authors),
        "booktitle": paper.venue,
        "year": str(paper.year or ""),
        "url": paper.url,
        "keywords": ", ".join(paper.keywords),
        "abstract": paper.abstract,
        "note": DERIVED_NOTE if paper.title_derived else "",
    }
    kind = "inproceedings" if paper.venue else "misc"
    body = ",\n".join(f"  {name} = {{{_bib_value(v)}}}" for name, v in fields.items() if v)
    return f"@{kind}{{{key},\n{body}\n}}\n"


def _title(paper: Paper) -> str:
    return f"[derived title] {paper.title}" if paper.title_derived else paper.title


def _bib_value(text: str) -> str:
    """Text as a braced BibTeX value: one line, braces balanced (else dropped), and ``%``,
    ``&``, ``#`` escaped where they are bare."""
    text = " ".join(text.split())
    if not _balanced(text):
        text = text.replace("{", "").replace("}", "")
    return re.sub(r"(?<!\\)([%&#])", r"\\\1", text)


def _balanced(text: str) -> bool:
    depth = 0
    for i, ch in enumerate(text):
        if i and text[i - 1] == "\\":
            continue
        depth += {"{": 1, "}": -1}.get(ch, 0)
        if depth < 0:
            return False
    return depth == 0


def _key(paper: Paper) -> str:
    """``surname2026word``: the first author's surname, the year and the title's first
    long word, in ASCII (the paper id when none of them is known)."""
    surname = paper.authors[0].split()[-1] if paper.authors else ""
    words = [w for w in re.findall(r"[A-Za-z]\w+", _ascii(paper.title)) if len(w) > 3]
    parts = [_ascii(surname).lower(), str(paper.year or ""), words[0].lower() if words else ""]
    key = re.sub(r"[^A-Za-z0-9]", "", "".join(parts))
    return key or re.sub(r"[^A-Za-z0-9:_-]", "", paper.paper_id) or "paper"


def _ascii(text: str) -> str:
    return unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode()


def _unique(key: str, taken: set[str]) -> str:
    if key not in taken:
        return key
    n = 2
    while f"{key}{_letter(n)}" in taken:
        n += 1
    return f"{key}{_letter(n)}"


def _letter(n: int) -> str:
    return chr(ord("a") + n - 1) if n <= 26 else str(n)


def to_csv(papers: Iterable[Paper]) -> str:
    """A header row, then a row per paper (authors and keywords joined by "; ")."""
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(CSV_COLUMNS)
    for p in papers:
        writer.writerow(
            [
                p.paper_id,
                p.label,
                "yes" if p.title_derived else "no",
                "; ".join(p.authors),
                p.venue,
                p.year or "",
                p.url,
                "; ".join(p.keywords),
                p.abstract,
            ]
        )
    return out.getvalue()


def to_markdown(papers: Iterable[Paper], heading: str = "") -> str:
    """A numbered list: title (derived titles marked), authors, venue and year, link."""
    lines = [f"# {heading}", ""] if heading else []
    for n, p in enumerate(papers, start=1):
        title = f"*{_md(p.title)}* (derived title)" if p.title_derived else f"**{_md(p.title)}**"
        parts = [title]
        if p.authors:
            parts.append(_md(", ".join(p.authors)))
        if p.venue_year:
            parts.append(p.venue_year)
        if p.url:
            parts.append(f"<{p.url}>")
        lines.append(f"{n}. " + ". ".join(parts))
    return "\n".join(lines) + "\n"


def _md(text: str) -> str:
    return re.sub(r"([\\`*_\[\]<>|])", r"\\\1", " ".join(text.split()))


def render(papers: Sequence[Paper], fmt: str) -> str:
    """The papers in ``fmt``: "bibtex", "csv" or "markdown"."""
    if fmt == "bibtex":
        return to_bibtex(papers)
    if fmt == "csv":
        return to_csv(papers)
    if fmt == "markdown":
        return to_markdown(papers)
    raise InputError(f"unknown export format {fmt!r}. Use bibtex, csv or markdown.")


def format_of(path: str | Path) -> str:
    """The export format a file name asks for, by its suffix."""
    suffix = Path(path).suffix.lower()
    if suffix not in FORMATS:
        raise InputError(f"cannot export to {path}: name it .bib, .csv or .md.")
    return FORMATS[suffix]


def write(papers: Sequence[Paper], path: str | Path) -> Path:
    """Write the papers to ``path`` in the format its suffix names."""
    path = Path(path)
    text = render(papers, format_of(path))
    try:
        path.write_text(text, encoding="utf-8", newline="")
    except OSError as exc:
        raise InputError(f"cannot write {path} ({exc.strerror}). Choose another path.") from exc
    return path
