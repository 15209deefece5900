"""Paper lists -> ``Paper`` records, checked in full before anything reaches an index.

Formats (``detect_format``): the bundled text list (a first line naming the list, e.g.
"ICML 2026 paper list", then one abstract per blank-line-separated paragraph), a JSON array
of objects, JSONL (one object per line) and CSV/TSV with a header. Field names match
case-insensitively against the aliases in ``FIELDS``.

Every record is checked against a schema before anything is written: the abstract is text
of at most ``LIMITS["abstract"]`` characters, the other text fields are bounded too, a year
is a whole number from ``YEARS`` (or text naming one), authors and keywords are text or lists
of it. Problems raise ``InputError`` with the file and line (or record) and what to do. With
``skip_invalid`` a bad record (no abstract, not an object, malformed JSONL line, a field that
breaks the schema) is listed in ``ReadResult.skipped`` instead; file-level problems (not a
regular file, too large, unreadable, not UTF-8, empty, malformed or too deeply nested JSON
array, unknown format, CSV without an abstract column) always raise. A year written as text
that names none ("n/a") is dropped from its record and listed in ``ReadResult.dropped``.
"""

from __future__ import annotations

import csv
import hashlib
import io
import json
import os
import re
import stat
import sys
import unicodedata
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import InputError
from ..text.sanitize import visible
from ..text.titles import derive_title, strip_markup
from ..types import YEARS, Paper

FORMATS = ("text", "json", "jsonl", "csv")
_FORMAT_ALIASES = {"txt": "text", "md": "text", "ndjson": "jsonl", "tsv": "csv"}
_EXTENSIONS = {
    ".txt": "text", ".md": "text", ".json": "json", ".jsonl": "jsonl", ".ndjson": "jsonl",
    ".csv": "csv", ".tsv": "csv",
}  # fmt: skip
# Canonical field -> accepted names, best first ("url" before "pdf": a landing page).
FIELDS: dict[str, tuple[str, ...]] = {
    "id": ("id", "paper_id", "doc_id", "uid"),
    "title": ("title", "name", "paper_title"),
    "abstract": ("abstract", "summary", "abstract_text", "text"),
    "authors": ("authors", "author", "author_names", "creators"),
    "url": ("url", "site", "link", "html_url", "pdf_url", "pdf", "doi"),
    "venue": ("venue", "conference", "booktitle"),
    "year": ("year", "date", "published"),
    "keywords": ("keywords", "keyword", "tags", "topics"),
}
# Venues a file name like "icml2019.json" may name, spelled as the venues spell themselves.
_KNOWN_VENUES = {
    v.lower(): v
    for v in "NeurIPS NIPS ICML ICLR AISTATS COLT UAI CoRL ACML COLM AutoML ALT AAAI IJCAI "
    "CVPR ICCV ECCV ACL EMNLP NAACL KDD TMLR JMLR".split()
}
_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|2[01]\d\d)(?!\d)")
_HEADER = re.compile(
    r"(?P<venue>(?:[A-Z][\w&.\-]*\s+)*?[A-Z][\w&.\-]*)\s*(?P<year>(?:19|20)\d\d)(?!\d)"
)
_SKIP_HINT = "or pass --skip-invalid to skip bad records"
# Most characters per field (after runs of white space become one space).
LIMITS = {
    "abstract": 20_000,
    "title": 1_000,
    "id": 200,
    "venue": 200,
    "url": 2_000,
    "authors": 20_000,
    "keywords": 5_000,
}
MAX_FILE_BYTES = 2**30


@dataclass
class ReadResult:
    """The papers read from one file, the records skipped (where, why) and in-file duplicates."""

    papers: list[Paper]
    skipped: list[tuple[str, str]]
    source: str
    duplicates: int = 0
    dropped: list[tuple[str, str]] = field(default_factory=list)  # (where, which value and why)
    places: list[str] = field(default_factory=list)  # where each paper is in the file


class _BadRecord(Exception):
    """A problem with one record; skipped with ``skip_invalid``, raised otherwise."""


@dataclass(frozen=True)
class _Fill:
    venue: str = ""
    year: int | None = None


def read_papers(
    path: Path,
    *,
    format: str | None = None,
    venue: str | None = None,
    year: int | None = None,
    skip_invalid: bool = False,
) -> ReadResult:
    """Read and check every paper in ``path``; raise ``InputError`` on the first problem.

    ``venue``/``year`` fill records that lack them (after a text list's own header); a file
    named like ``icml2019.json`` fills what is still missing. Records whose normalised
    abstract repeats an earlier one are counted in ``duplicates`` and dropped.
    """
    path = Path(path)
    if year is not None and year not in YEARS:
        raise InputError(f"--year {year} is not a year from {YEARS[0]} to {YEARS[-1]}.")
    text = _read_text(path)
    fmt = _format_name(format) if format else detect_format(path, text=text)
    named = _fill_from_file_name(path)
    fill = _Fill(venue or named.venue, year if year is not None else named.year)
    records = _PARSERS[fmt](text, str(path))
    unit = "record" if fmt == "json" else "line"
    return _collect(records, str(path), fill, skip_invalid=skip_invalid, unit=unit)


def detect_format(path: Path, *, text: str | None = None) -> str:
    """``text``, ``json``, ``jsonl`` or ``csv``: from the extension, else from the content."""
    path = Path(path)
    by_extension = _EXTENSIONS.get(path.suffix.lower())
    if by_extension:
        return by_extension
    return _sniff(text if text is not None else _read_text(path))


def normalise_abstract(text: str) -> str:
    """The form two abstracts are compared in: NFKC, lower case, single spaces."""
    return " ".join(unicodedata.normalize("NFKC", text).lower().split())


def paper_id_for(abstract: str) -> str:
    """A stable id for a paper without one: ``h-`` and 16 hex digits of its abstract's hash."""
    digest = hashlib.sha1(normalise_abstract(abstract).encode("utf-8")).hexdigest()
    return f"h-{digest[:16]}"


# --- the file -----------------------------------------------------------------------------


def _read_text(path: Path) -> str:
    raw = _read_bytes(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise InputError(
            f"not UTF-8 text (byte 0x{raw[exc.start]:02x}). Save the file as UTF-8 and retry.",
            f"{path}:{line}",
        ) from None
    if not text.strip():
        raise InputError("empty file, no papers to read. Pick a file that lists papers.", str(path))
    return text


def _read_bytes(path: Path) -> bytes:
    """The file's bytes; only a regular file of at most ``MAX_FILE_BYTES`` is read (a FIFO
    would block, ``/dev/zero`` never ends)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)  # a FIFO opens without a writer
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if stat.S_ISDIR(info.st_mode):
                raise IsADirectoryError
            if not stat.S_ISREG(info.st_mode):
                raise InputError(
                    f"is not a regular file (a {_file_kind(info.st_mode)}). Save the papers "
                    "to a .txt, .json, .jsonl or .csv file and pass that.",
                    str(path),
                )
            if info.st_size > MAX_FILE_BYTES:
                raise InputError(
                    f"is {info.st_size / 2**30:.1f} GiB; a paper list may have at most "
                    f"{MAX_FILE_BYTES / 2**30:.0f} GiB. Split it into smaller files.",
                    str(path),
                )
            return f.read(MAX_FILE_BYTES + 1)
    except FileNotFoundError:
        problem = "no such file. Check the path."
    except IsADirectoryError:
        problem = "is a directory. Pass a .txt, .json, .jsonl or .csv file."
    except PermissionError:
        problem = "permission denied. Make the file readable or copy it somewhere readable."
    except OSError as exc:
        problem = f"cannot be read ({exc.strerror or exc}). Check the file."
    raise InputError(problem, str(path))


def _file_kind(mode: int) -> str:
    kinds = {stat.S_ISFIFO: "FIFO", stat.S_ISCHR: "device", stat.S_ISBLK: "device"}
    return next((kind for test, kind in kinds.items() if test(mode)), "socket")


def _format_name(name: str) -> str:
    fmt = _FORMAT_ALIASES.get(name.strip().lower(), name.strip().lower())
    if fmt not in FORMATS:
        raise InputError(f"Unknown format {name!r}. Use one of: {', '.join(FORMATS)}.")
    return fmt


def _sniff(text: str) -> str:
    start = text.lstrip()
    if start.startswith("["):
        return "json"
    if start.startswith("{"):
        return "jsonl"
    first_line = start.split("\n", 1)[0]
    if ("," in first_line or "\t" in first_line) and _abstract_column(_header_cells(first_line)):
        return "csv"
    return "text"


def _fill_from_file_name(path: Path) -> _Fill:
    match = re.fullmatch(r"([A-Za-z]{2,10})[-_]?((?:19|20)\d\d)", path.stem)
    if not match or match.group(1).lower() not in _KNOWN_VENUES:
        return _Fill()
    return _Fill(_KNOWN_VENUES[match.group(1).lower()], int(match.group(2)))


# --- formats: each yields (where, record) with record a dict or a _BadRecord ------------------

_Records = Iterator[tuple[str, Any]]


def _parse_text(text: str, source: str) -> _Records:
    paragraphs = _paragraphs(text)
    header = _Fill()
    first_line, first = paragraphs[0]
    if len(first) == 1 and len(first[0]) <= 150 and not first[0].rstrip().endswith((".", "!", "?")):
        header = _header_fill(first[0])
        paragraphs = paragraphs[1:]
    for line, lines in paragraphs:
        record = {"abstract": " ".join(lines), "venue": header.venue, "year": header.year}
        yield f"{source}:{line}", record


def _paragraphs(text: str) -> list[tuple[int, list[str]]]:
    """Blank-line-separated paragraphs as (first line number, stripped lines)."""
    paragraphs: list[tuple[int, list[str]]] = []
    current: list[str] = []
    for number, line in enumerate(text.split("\n"), start=1):
        if line.strip():
            if not current:
                paragraphs.append((number, current))
            current.append(line.strip())
        else:
            current = []
    return paragraphs


def _header_fill(line: str) -> _Fill:
    """Venue and year from a list's name: "ICML 2026 论文列表" -> ICML, 2026."""
    match = _HEADER.search(line)
    return _Fill(match["venue"], int(match["year"])) if match else _Fill()


def _parse_json(text: str, source: str) -> _Records:
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise InputError(
            f"malformed JSON ({exc.msg}, column {exc.colno}). Fix the file: a JSON array "
            "must parse as a whole (use JSONL to skip bad lines).",
            f"{source}:{exc.lineno}",
        ) from None
    except (RecursionError, ValueError) as exc:  # nesting, or a number of 4,300+ digits
        raise InputError(f"{_json_problem(exc)}. Fix the file.", source) from None
    for number, record in enumerate(_json_records(data, source), start=1):
        yield f"{source} record {number}", record


def _json_records(data: Any, source: str) -> list[Any]:
    """The records of a JSON array, or the one paper a lone object describes."""
    if isinstance(data, list):
        return data
    if isinstance(data, dict) and _lookup(_lowered(data), "abstract"):
        return [data]
    raise InputError(
        f"expected a JSON array of paper objects, found {_kind(data)}. "
        "Write the papers as a JSON array or as JSONL.",
        source,
    )


def _parse_jsonl(text: str, source: str) -> _Records:
    for number, line in enumerate(text.split("\n"), start=1):
        if not line.strip():
            continue
        try:
            yield f"{source}:{number}", json.loads(line)
        except json.JSONDecodeError as exc:
            yield f"{source}:{number}", _BadRecord(f"malformed JSON ({exc.msg})")
        except (RecursionError, ValueError) as exc:
            yield f"{source}:{number}", _BadRecord(_json_problem(exc))


def _json_problem(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return "JSON nested too deeply (a paper is an object of text, numbers and lists)"
    return f"unreadable JSON ({' '.join(str(exc).split())[:120]})"


def _parse_csv(text: str, source: str) -> _Records:
    csv.field_size_limit(min(sys.maxsize, 2**31 - 1))  # abstracts can exceed the 128 KiB default
    header_line = text.split("\n", 1)[0]
    delimiter = "\t" if header_line.count("\t") > header_line.count(",") else ","
    reader = csv.reader(io.StringIO(text, newline=""), delimiter=delimiter)
    header = [cell.strip() for cell in next(reader)]
    if not _abstract_column(header):
        raise InputError(
            f"no abstract column in the CSV header ({', '.join(header)}). "
            "Name the column with the abstracts 'abstract'.",
            f"{source}:1",
        )
    yield from _csv_rows(reader, header, source)


def _csv_rows(reader: Any, header: list[str], source: str) -> _Records:
    rows, start = 0, reader.line_num + 1
    try:
        for row in reader:
            where, start = f"{source}:{start}", reader.line_num + 1
            if not any(cell.strip() for cell in row):
                continue
            rows += 1
            if len(row) > len(header):
                yield where, _BadRecord(f"row has {len(row)} fields, the header {len(header)}")
            else:
                yield where, dict(zip(header, row, strict=False))
    except csv.Error as exc:
        raise InputError(f"malformed CSV ({exc}). Fix the file.", f"{source}:{start}") from None
    if rows == 0:
        raise InputError("only a header line, no papers. Add one row per paper.", source)


def _header_cells(line: str) -> list[str]:
    delimiter = "\t" if line.count("\t") > line.count(",") else ","
    return next(csv.reader([line], delimiter=delimiter), [])


def _abstract_column(header: list[str]) -> bool:
    return any(cell.strip().lower() in FIELDS["abstract"] for cell in header)


_PARSERS = {"text": _parse_text, "json": _parse_json, "jsonl": _parse_jsonl, "csv": _parse_csv}


# --- records -> papers ------------------------------------------------------------------------


def _collect(
    records: Iterable[tuple[str, Any]], source: str, fill: _Fill, *, skip_invalid: bool, unit: str
) -> ReadResult:
    result = ReadResult(papers=[], skipped=[], source=source)
    seen_abstracts: set[str] = set()
    seen_ids: dict[str, str] = {}
    for where, record in records:
        dropped: list[str] = []
        try:
            paper = _to_paper(record, fill, dropped)
            key = normalise_abstract(paper.abstract)
            if key in seen_abstracts:
                result.duplicates += 1
                continue
            _check_new_id(paper.paper_id, seen_ids, where)
        except _BadRecord as exc:
            if not skip_invalid:
                raise InputError(f"{exc}. Fix the {unit} {_SKIP_HINT}.", where) from None
            result.skipped.append((where, str(exc)))
            continue
        seen_abstracts.add(key)
        result.papers.append(paper)
        result.places.append(where)
        result.dropped.extend((where, what) for what in dropped)
    if not (result.papers or result.skipped or result.duplicates):
        raise InputError("no papers in the file. Pick a file that lists papers.", source)
    return result


def _check_new_id(paper_id: str, seen_ids: dict[str, str], where: str) -> None:
    if paper_id in seen_ids:
        raise _BadRecord(f"id {paper_id!r} already used at {seen_ids[paper_id]}")
    seen_ids[paper_id] = where


def _to_paper(record: Any, fill: _Fill, dropped: list[str]) -> Paper:
    """The paper a record describes, each field checked; what is dropped is added to
    ``dropped``."""
    if isinstance(record, _BadRecord):
        raise record
    if not isinstance(record, dict):
        raise _BadRecord(f"record is {_kind(record)}, not an object")
    fields = _lowered(record)
    abstract = _bounded("abstract", _abstract(_lookup(fields, "abstract")))
    title = _bounded("title", _title(_lookup(fields, "title")))
    year = _year(_lookup(fields, "year"), dropped)
    return Paper(
        paper_id=_bounded("id", _paper_id(_lookup(fields, "id"), abstract)),
        title=title or derive_title(abstract),
        abstract=abstract,
        title_derived=not title,
        venue=_bounded("venue", _scalar("venue", _lookup(fields, "venue"))) or fill.venue,
        year=year if year is not None else fill.year,
        authors=_bounded_list("authors", _authors(_lookup(fields, "authors"))),
        url=_bounded("url", _url(fields)),
        keywords=_bounded_list("keywords", _keywords(_lookup(fields, "keywords"))),
    )


def _bounded(name: str, text: str) -> str:
    limit = LIMITS[name]
    if len(text) <= limit:
        return text
    hint = " (a full text? index the abstract only)" if name == "abstract" else ""
    raise _BadRecord(f"{name} has {len(text):,} characters, more than {limit:,}{hint}")


def _bounded_list(name: str, items: tuple[str, ...]) -> tuple[str, ...]:
    _bounded(name, "; ".join(items))
    return items


def _lowered(record: dict[Any, Any]) -> dict[str, Any]:
    return {str(key).strip().lower(): value for key, value in record.items()}


def _lookup(fields: dict[str, Any], name: str, aliases: Iterable[str] = ()) -> Any:
    """The first non-empty value among the field's aliases."""
    for alias in aliases or FIELDS[name]:
        value = fields.get(alias)
        if value not in (None, "", [], {}) and not (isinstance(value, str) and not value.strip()):
            return value
    return None


def _kind(value: Any) -> str:
    names = {str: "a string", list: "a list", dict: "an object", bool: "a boolean"}
    if isinstance(value, int | float) and not isinstance(value, bool):
        return "a number"
    return names.get(type(value), "null" if value is None else type(value).__name__)


def _abstract(value: Any) -> str:
    if value is None:
        raise _BadRecord("record has no abstract")
    if not isinstance(value, str):
        raise _BadRecord(f"abstract is {_kind(value)}, not text")
    return " ".join(visible(value).split())


def _title(value: Any) -> str:
    return strip_markup(visible(value)) if isinstance(value, str) else _scalar("title", value)


def _scalar(name: str, value: Any) -> str:
    """Text from a string or a number; anything else breaks the schema."""
    if value is None:
        return ""
    if isinstance(value, bool) or not isinstance(value, str | int | float):
        raise _BadRecord(f"{name} is {_kind(value)}, not text")
    return _text(value)


def _text(value: Any) -> str:
    return " ".join(visible(str(value)).split()) if value is not None else ""


def _paper_id(value: Any, abstract: str) -> str:
    if isinstance(value, dict | list | bool):
        raise _BadRecord(f"id is {_kind(value)}, not a string or number")
    return _text(value) or paper_id_for(abstract)


def _year(value: Any, dropped: list[str]) -> int | None:
    """A year from a number or from text that names one ("2019", "May 2019", "2019-05-01").

    Text that names none is dropped (noted in ``dropped``); any other value outside
    ``YEARS`` breaks the schema: one record must not turn every year filter into an error.
    """
    if value is None:
        return None
    if isinstance(value, str) and not value.strip().isdigit():
        match = _YEAR.search(value)
        if match:
            return int(match.group(1))
        dropped.append(f"year {_clip(value)!r} names no year, so the paper has none")
        return None
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        raise _BadRecord(f"year is {_kind(value)}, not a year")
    if isinstance(value, float) and not value.is_integer():
        raise _BadRecord(f"year {value} is not a whole number")
    digits = value.strip() if isinstance(value, str) else ""
    number = int(digits) if 0 < len(digits) <= 4 else None if digits else int(value)
    if number not in YEARS:
        shown = _clip(str(value).strip())
        raise _BadRecord(f"year {shown} is not a year from {YEARS[0]} to {YEARS[-1]}")
    return number


def _clip(text: str, n: int = 40) -> str:
    return text if len(text) <= n else text[: n - 1] + "…"


def _authors(value: Any) -> tuple[str, ...]:
    """Names from a list, "A; B; C" or "A, B and C"."""
    if isinstance(value, list):
        return tuple(name for name in (_author_name(item) for item in value) if name)
    if isinstance(value, dict):
        return tuple(name for name in [_author_name(value)] if name)
    if value is None:
        return ()
    if not isinstance(value, str):
        raise _BadRecord(f"authors is {_kind(value)}, not names")
    separator = r";" if ";" in value else r",\s*(?:and\s+)?|\s+and\s+|\s*&\s*"
    return tuple(name for name in (_text(p) for p in re.split(separator, value)) if name)


def _author_name(item: Any) -> str:
    """A name from a string or an object like {"name": ...} / {"given": ..., "family": ...}."""
    if not isinstance(item, dict):
        return _scalar("an author", item)
    fields = _lowered(item)
    name = _lookup(fields, "name", ("name", "full_name", "fullname"))
    if name is not None:
        return _scalar("an author's name", name)
    parts = (_scalar("an author's name", fields.get(k)) for k in ("given", "family"))
    return " ".join(p for p in parts if p)


def _keywords(value: Any) -> tuple[str, ...]:
    if isinstance(value, list):
        parts = [_scalar("a keyword", item) for item in value]
    elif isinstance(value, str):
        parts = [_text(p) for p in value.split(";" if ";" in value else ",")]
    elif value is None:
        parts = []
    else:
        raise _BadRecord(f"keywords is {_kind(value)}, not text")
    return tuple(p for p in parts if p)


def _url(fields: dict[str, Any]) -> str:
    url = _scalar("url", _lookup(fields, "url"))
    if re.fullmatch(r"10\.\d{4,9}/\S+", url):
        return f"https://doi.org/{url}"  # a bare DOI
    return url
