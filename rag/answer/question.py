"""Reading a question: filters it names ("ICML 2026 papers on ...") and follow-up rewrites."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from ..retrieve.search import Filters
from ..types import Answer, Paper

_YEAR = r"(19[5-9]\d|20\d\d)"
_RANGE = re.compile(
    rf"\b(?:between|from)\s+{_YEAR}\s+(?:and|to|-|–)\s+{_YEAR}\b|\b{_YEAR}\s*[-–]\s*{_YEAR}\b"
)
_SINCE = re.compile(rf"\b(?:since|after|from)\s+{_YEAR}\b(?!\s*(?:and|to|-|–)\s*\d)", re.I)
_BEFORE = re.compile(rf"\b(?:before|until|up to)\s+{_YEAR}\b", re.I)
_ONE_YEAR = re.compile(rf"\b(?:in\s+|of\s+)?{_YEAR}\b")


def parse_filters(
    question: str, venues: Sequence[str], titles: Sequence[str] = ()
) -> tuple[Filters, str]:
    """Filters named in the question, and the question with them taken out.

    Venues are recognised only when the index holds them, so words like "Nature" or
    "ACL" are left alone in a corpus without them. A year or venue the question quotes as
    part of one of ``titles`` ("Winning the NeurIPS 2018 Pommerman Competition") names that
    paper, not a filter.
    """
    kept: list[str] = []

    def keep(m: re.Match[str]) -> str:
        kept.append(m.group(0))
        return f"\ue000{len(kept) - 1}\ue001"

    scan = question
    for phrase in _title_phrases(question, venues, titles):
        scan = phrase.sub(keep, scan)
    venue, text = _take_venue(scan, venues)
    year_min, year_max, text = _take_years(text)
    text = re.sub(r"\ue000(\d+)\ue001", lambda m: kept[int(m.group(1))], text)
    text = re.sub(r"\s{2,}", " ", text).strip(" ,")
    if venue is None and year_min is None and year_max is None:
        return Filters(), question
    return Filters(venue=venue, year_min=year_min, year_max=year_max), text or question


def _title_phrases(
    question: str, venues: Sequence[str], titles: Sequence[str]
) -> list[re.Pattern[str]]:
    """Three words of a title around each year or venue it holds, where the question has
    them: the question quotes the title there."""
    marks = [r"\d{4}", *map(re.escape, venues)]
    if not titles or not re.search("|".join(marks), question, re.I):
        return []
    named = {v.lower() for v in venues}
    found = []
    for title in titles:
        words = [w.strip(".,:;!?()\"'") for w in title.split()]
        for i, word in enumerate(words):
            if not (re.fullmatch(_YEAR, word) or word.lower() in named):
                continue
            for start in (i - 1, i, i - 2):
                window = words[max(start, 0) : start + 3] if start >= 0 else []
                if len(window) == 3 and all(window):
                    body = r"\W+".join(map(re.escape, window))
                    phrase = re.compile(rf"(?<!\w){body}(?!\w)", re.I)
                    if phrase.search(question):
                        found.append(phrase)
                        break
    return found


def _take_venue(question: str, venues: Sequence[str]) -> tuple[str | None, str]:
    for venue in sorted(venues, key=len, reverse=True):
        pattern = re.compile(rf"\b(?:at\s+|from\s+|in\s+)?{re.escape(venue)}\b(?:'s)?", re.I)
        if pattern.search(question):
            return venue, pattern.sub(" ", question, count=1)
    return None, question


def _take_years(text: str) -> tuple[int | None, int | None, str]:
    # a year in a citation ("Jung et al. (2025)", "(Smith, 2019)") names a paper, not a filter
    text_for_years = re.sub(r"\([^()]*\b(19|20)\d\d[a-z]?\)|\bet al\.?,?\s*\(?\d{4}\)?", " ", text)
    if text_for_years != text:
        found = _take_years(text_for_years)
        return found[0], found[1], text if found[:2] == (None, None) else found[2]
    if m := _RANGE.search(text):
        years = sorted(int(y) for y in m.groups() if y)
        return years[0], years[-1], text.replace(m.group(0), " ")
    if m := _SINCE.search(text):
        return int(m.group(1)), None, text.replace(m.group(0), " ")
    if m := _BEFORE.search(text):
        return None, int(m.group(1)) - 1, text.replace(m.group(0), " ")
    if m := _ONE_YEAR.search(text):
        year = int(m.group(1))
        return year, year, text.replace(m.group(0), " ")
    return None, None, text


# -- follow-ups ------------------------------------------------------------------------------
_ORDINALS = {
    "first": 0, "former": 0, "second": 1, "latter": 1, "other": 1, "third": 2, "last": -1,
}  # fmt: skip
# "the second (paper)", not "its second algorithm" (the paper's own second algorithm)
_PICK = re.compile(
    r"(?<!\bits )(?<!\btheir )\b(?:the\s+)?(first|second|third|last|other|former|latter)"
    r"(?:\s+(?:one|paper|method|work))?\b",
    re.I,
)
_BOTH = re.compile(r"\b(both|them|they|their|these papers|those papers|each)\b", re.I)
_ONE = re.compile(
    r"\b(its|it|this paper|that paper|the paper|this method|that method|this work|that work)\b",
    re.I,
)
# what the previous paper is about, named by its kind: "this task", "that problem"
_ONE_THING = re.compile(
    r"\b(?:this|that)\s+(task|problem|setting|approach|model|algorithm)\b", re.I
)


def rewrite_followup(question: str, history: Sequence[Any] | None) -> str:
    """A follow-up ("what are its limitations?") as a standalone question.

    The papers it refers to are those the previous answer cited (or retrieved), so the
    rewrite names them by title. A question that refers to nothing is returned as it is.
    """
    if _refers_inside(question):
        return question  # "How does NerveNet represent an agent, and what does it ...?"
    previous = _previous_papers(history)
    if not previous:
        earlier = _previous_question(history)
        refers = any(p.search(question) for p in (_PICK, _BOTH, _ONE, _ONE_THING))
        return f"{question} (following up on: {earlier})" if earlier and refers else question
    if m := _PICK.search(question):
        index = _ORDINALS[m.group(1).lower()]
        if index < len(previous) or index == -1:
            return _replace(question, m, _name(previous[index]))
    if m := _BOTH.search(question):
        if len(previous) >= 2:
            names = " and ".join(_name(p) for p in previous[:2])
            return _replace(question, m, names, possessive=m.group(1).lower() == "their")
    if m := _ONE.search(question):
        return _replace(question, m, _name(previous[0]), possessive=m.group(1).lower() == "its")
    if m := _ONE_THING.search(question):  # "this task" -> "the task of GIP"
        return _replace(question, m, f"the {m.group(1)} of {_name(previous[0])}")
    return question


_REFERENT = re.compile(
    r"\b(?:the|a|an|this|that)\s+(?:[\w²³'-]+\s+){0,6}?(?:paper|papers|method|methods|model|"
    r"models|approach|approaches|algorithm|algorithms|framework|work|study|studies|system)\b",
    re.I,
)


def _refers_inside(question: str) -> bool:
    """Whether the question's first pronoun has its referent before it in the question: a
    name ("NerveNet ..., and what does it ...?") or a described paper ("the paper on X:
    what does it ..."). Such a question stands on its own."""
    from .support import names_in

    first = min(
        (m for p in (_PICK, _BOTH, _ONE, _ONE_THING) if (m := p.search(question))),
        key=lambda m: m.start(),
        default=None,
    )
    if first is None:
        return False
    before = question[: first.start()]
    return bool(names_in(before)) or bool(_REFERENT.search(before))


def _name(paper: Paper) -> str:
    """How a rewrite refers to a paper: its method's short name ("OPIC"), else its title."""
    from .answering import paper_name

    return paper_name(paper) or paper.title


def _replace(question: str, match: re.Match[str], name: str, possessive: bool = False) -> str:
    name = f"{name}'s" if possessive else name
    rewritten = question[: match.start()] + name + question[match.end() :]
    rewritten = re.sub(r"^\s*(and|so|ok|okay|also)\b[,\s]*", "", rewritten, flags=re.I)
    return rewritten[:1].upper() + rewritten[1:]


def _previous_papers(history: Sequence[Any] | None) -> list[Paper]:
    """Papers the last answer in the history cited, else those it retrieved."""
    for turn in reversed(list(history or [])):
        answer = turn if isinstance(turn, Answer) else _answer_in(turn)
        if answer is None:
            continue
        if answer.citations:
            return [c.paper for c in answer.citations]
        return [h.paper for h in answer.hits[:2]]
    return []


def _previous_question(history: Sequence[Any] | None) -> str:
    """The last question asked, from plain chat history (strings or role/content dicts)."""
    for turn in reversed(list(history or [])):
        if isinstance(turn, str):
            return turn
        if isinstance(turn, dict) and turn.get("role") == "user":
            return str(turn.get("content", ""))
    return ""


def _answer_in(turn: Any) -> Answer | None:
    if isinstance(turn, tuple | list):
        return next((t for t in turn if isinstance(t, Answer)), None)
    if isinstance(turn, dict) and isinstance(turn.get("answer"), Answer):
        return turn["answer"]
    return None
