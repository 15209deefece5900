"""Answer text made safe for any client: no active content, no remote images.

A paper's abstract is written by whoever made the paper list, and a model may copy it into
its answer. ``safe_text`` takes out what a markdown or HTML renderer would run or fetch:
images, links to ``javascript:``/``vbscript:``/``data:`` URLs (their text stays), HTML
elements that can run or load something (with their content), other HTML tags (their text
stays), event-handler attributes and comments. Ordinary prose, math (``$x^{2}$``),
comparisons (``a < b``) and citation markers (``[1]``) pass unchanged.
"""

from __future__ import annotations

import html
import re

_UNSAFE_SCHEMES = ("javascript:", "vbscript:", "data:")
# Elements dropped with everything inside them: what they contain runs, or is not prose.
_WITH_CONTENT = (
    "script|style|iframe|object|svg|math|template|noscript|applet|frameset|noembed|noframes|"
    "xmp|textarea|select|title|head"
)
# Every other HTML element: its tags go, its text stays.
_ELEMENTS = "|".join(
    """a abbr address area article aside audio b base bdi bdo blockquote body br button canvas
    caption center cite code col colgroup data datalist dd del details dfn dialog dir div dl dt
    em embed fieldset figcaption figure font footer form frame h1 h2 h3 h4 h5 h6 header hr html
    i image img input ins isindex kbd keygen label legend li link main map mark marquee menu
    meta meter nav nobr ol optgroup option output p param picture plaintext portal pre progress
    q rp rt ruby s samp search section slot small source span strike strong sub summary sup
    table tbody td tfoot th thead time tr track tt u ul var video wbr""".split()
)

_BLOCK = re.compile(rf"<({_WITH_CONTENT})\b[^>]*>.*?(?:</\1\s*>|\Z)", re.IGNORECASE | re.DOTALL)
_TAG = re.compile(rf"</?(?:{_ELEMENTS})(?![\w-])[^<>]*>", re.IGNORECASE)
_HANDLER_TAG = re.compile(r"</?[a-z][\w:-]*\b[^<>]*?\bon[a-z]+\s*=[^<>]*>", re.IGNORECASE)
# What is left of a tag that never closed: one that holds content, or has attributes.
_TAG_START = re.compile(
    rf"<(?=/?(?:{_WITH_CONTENT})(?![\w-])|/?(?:{_ELEMENTS})(?![\w-])[^<>]*=|[!?])", re.IGNORECASE
)
_COMMENT = re.compile(r"<!--.*?(?:-->|\Z)|<!\[CDATA\[.*?(?:\]\]>|\Z)|<[!?][^<>]*>", re.DOTALL)
_AUTOLINK = re.compile(r"<([a-z][a-z0-9+.\-]*:[^<>\s]*)>", re.IGNORECASE)
_DEFINITION = re.compile(r"^ {0,3}\[([^\]\n]+)\]:[ \t]*<?([^\s>]+)>?.*$", re.MULTILINE)
_IMAGE_REF = re.compile(r"!\[([^\]\n]{0,999})\](?:\[([^\]\n]{0,999})\])?")
_PASSES = 16  # nesting deeper than this is left to the last pass, which breaks every tag
_LABEL_CHARS = 1000  # how far back the "[" of a link is looked for
_URL_CHARS = 4000  # how far the ")" that ends a link is looked for
_URL_PARENS = 32  # parentheses nested deeper end no link (CommonMark lets parsers choose)


def safe_text(text: str) -> str:
    """``text`` without active content or remote images; see the module docstring."""
    for _ in range(_PASSES):  # taking one thing out can join the pieces of another
        before = text
        text = _COMMENT.sub("", text)
        text = _BLOCK.sub("", text)
        text = _HANDLER_TAG.sub("", text)
        text = _TAG.sub("", text)
        text = _markdown_links(text)
        text = _reference_images(text)
        text = _AUTOLINK.sub(lambda m: "" if unsafe_url(m[1]) else m[0], text)
        text = _DEFINITION.sub(lambda m: "" if unsafe_url(m[2]) else m[0], text)
        if text == before:
            break
    return _TAG_START.sub("< ", text)  # a browser opens no tag at "< "


# Characters that show nothing but split or reorder words ("ker\u200dnels"): zero-width spaces
# and joiners, the soft hyphen, word joiners and invisible operators, the byte-order mark,
# and the bidirectional embedding, override and isolate controls.
_INVISIBLE = re.compile("[\u00ad\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]")


def visible(text: str) -> str:
    """``text`` without the characters that show nothing (questions and abstracts alike)."""
    return _INVISIBLE.sub("", text)


def web_link(url: str) -> str:
    """``url`` when it is an http(s) link, else "" (what a printed reference may show)."""
    return url if re.match(r"https?://\S+$", url.strip(), re.I) else ""


def safe_url(url: str) -> str:
    """``url`` unless a browser would run it (``javascript:``, ``data:``...); else ""."""
    return "" if unsafe_url(url) else url


def unsafe_url(url: str) -> bool:
    """True for a URL that runs code or carries its own content, however it is spelled
    (entities, case, whitespace and control characters inside the scheme)."""
    plain = re.sub(r"[\x00-\x20\x7f]+", "", html.unescape(url)).lower().lstrip("<")
    return plain.startswith(_UNSAFE_SCHEMES)


def _reference_images(text: str) -> str:
    """``![alt][ref]`` and ``![ref]`` where ``[ref]: URL`` is defined: images too."""
    defined = {m[1].strip().lower() for m in _DEFINITION.finditer(text)}

    def drop(m: re.Match[str]) -> str:
        ref = (m[2] if m[2] is not None else m[1]).strip().lower()
        return "" if (m[2] is not None or ref in defined) else m[0]

    return _IMAGE_REF.sub(drop, text)


def _markdown_links(text: str) -> str:
    """Inline images dropped, links to unsafe URLs replaced by their text; others kept."""
    out: list[str] = []
    i = 0
    while (close := text.find("](", i)) != -1:
        end = _destination_end(text, close + 2)
        if end is None:
            out.append(text[i : close + 2])
            i = close + 2
            continue
        open_ = _link_start(text, close, i)
        if open_ is not None and open_ > 0 and text[open_ - 1] == "!":
            out.append(text[i : open_ - 1])  # an image: all of it goes
        elif unsafe_url(text[close + 2 : end].strip()):
            if open_ is None:  # no "[" in reach: the destination goes
                out.append(text[i : close + 1])
            else:  # the link's text stays
                out.append(text[i:open_] + text[open_ + 1 : close])
        else:
            out.append(text[i : end + 1])
        i = end + 1
    out.append(text[i:])
    return "".join(out)


def _link_start(text: str, close: int, floor: int) -> int | None:
    """Where the ``[`` is that the ``]`` at ``close`` ends, brackets balanced."""
    depth = 0
    for j in range(close - 1, max(floor, close - _LABEL_CHARS) - 1, -1):
        if text[j] == "]":
            depth += 1
        elif text[j] == "[":
            if depth == 0:
                return j
            depth -= 1
        elif text.startswith("\n\n", j):
            return None  # links do not cross paragraphs
    return None


def _destination_end(text: str, start: int) -> int | None:
    """Where the ``)`` is that closes a link destination starting at ``start``."""
    depth = 0
    for j in range(start, min(len(text), start + _URL_CHARS)):
        if text[j] == "(":
            depth += 1
            if depth > _URL_PARENS:
                return None
        elif text[j] == ")":
            if depth == 0:
                return j
            depth -= 1
        elif text.startswith("\n\n", j):
            return None
    return None
