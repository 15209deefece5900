"""Question files: JSONL rows checked in full, and their relevant papers found in an index.

A row names its relevant papers by id, or by a piece of text only that paper's title or
abstract contains (``{"contains": "DensityFlow"}`` or ``"contains:DensityFlow"``), so a
file written for a list without ids survives a change of how ids are made. The format is
described in ``eval/README.md``.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    PrivateAttr,
    ValidationError,
    field_validator,
    model_validator,
)

from rag import Paper

_CONTAINS = "contains:"
_ID = "id:"


class QuestionFileError(Exception):
    """A question file that cannot be used; the message names the file and line."""


class Contains(BaseModel):
    """The one paper whose title or abstract contains this text (case ignored)."""

    model_config = ConfigDict(extra="forbid")

    contains: str = Field(min_length=3)


Kind = Literal[
    "",
    "specific",
    "numeric",
    "unstated",
    "false_premise",
    "comparison",
    "multi",
    "followup",
    "list",
]
"""What a question tests: ``unstated`` asks a fact the relevant paper's abstract does not
state (the answer must say so); ``false_premise`` presumes a paper no indexed paper is
(the answer must say none does); ``numeric`` asks a number its ``facts`` hold;
``comparison`` sets two papers side by side (each needs one of its ``facts`` stated);
``list`` asks for every paper that does something (``relevant`` is the whole list)."""


class Question(BaseModel):
    """One row of a question file."""

    model_config = ConfigDict(extra="forbid")

    id: str = Field(min_length=1)
    question: str = Field(min_length=1)
    relevant: list[str | Contains] = Field(default_factory=list)
    answerable: bool = True
    facts: list[str] = Field(default_factory=list)
    history: list[str] = Field(default_factory=list)
    venue: str | None = None
    year: int | None = None
    needle: bool = True
    kind: Kind = ""
    note: str = ""
    _line: int = PrivateAttr(default=0)

    @field_validator("relevant", mode="before")
    @classmethod
    def _prefixed(cls, refs: object) -> object:
        if not isinstance(refs, list):
            return refs
        return [_ref(r) for r in refs]

    @model_validator(mode="after")
    def _relevant_matches_answerable(self) -> Question:
        if self.answerable and not self.relevant:
            raise ValueError("an answerable question needs at least one relevant paper")
        if not self.answerable and (self.relevant or self.facts):
            raise ValueError("an unanswerable question has no relevant papers and no facts")
        if self.kind == "false_premise" and self.answerable:
            raise ValueError("a false-premise question is not answerable")
        if self.kind == "unstated" and self.facts:
            raise ValueError("an unstated-fact question has no facts to state")
        return self

    @property
    def line(self) -> int:
        """Where the row is in its file (1-based)."""
        return self._line

    @property
    def filters(self) -> dict[str, Any]:
        return {k: v for k, v in (("venue", self.venue), ("year", self.year)) if v is not None}


def _ref(ref: object) -> object:
    if isinstance(ref, str) and ref.startswith(_CONTAINS):
        return {"contains": ref[len(_CONTAINS) :].strip()}
    if isinstance(ref, str) and ref.startswith(_ID):
        return ref[len(_ID) :].strip()
    return ref


def load_questions(path: Path) -> list[Question]:
    """Every row of a JSONL question file; the first bad row raises ``QuestionFileError``."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise QuestionFileError(f"{path}: cannot be read ({exc}).") from None
    questions: list[Question] = []
    seen: dict[str, int] = {}
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        question = _parse_row(line, f"{path}:{number}")
        question._line = number
        if question.id in seen:
            raise QuestionFileError(
                f"{path}:{number}: id {question.id!r} is already used on line {seen[question.id]}."
            )
        seen[question.id] = number
        questions.append(question)
    if not questions:
        raise QuestionFileError(f"{path}: no questions. Write one JSON object per line.")
    return questions


def _parse_row(line: str, where: str) -> Question:
    try:
        data = json.loads(line)
    except json.JSONDecodeError as exc:
        raise QuestionFileError(
            f"{where}: malformed JSON ({exc.msg}, column {exc.colno})."
        ) from None
    if not isinstance(data, dict):
        raise QuestionFileError(f"{where}: expected a JSON object, got {type(data).__name__}.")
    try:
        return Question.model_validate(data)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(p) for p in first["loc"])
        message = first["msg"].removeprefix("Value error, ")
        raise QuestionFileError(f"{where}: {field + ': ' if field else ''}{message}.") from None


class PaperLookup:
    """Find the papers a question's references name, among the papers of an index."""

    def __init__(self, papers: Iterable[Paper]) -> None:
        self.papers = {p.paper_id: p for p in papers}
        self._texts = [(pid, f"{p.title}\n{p.abstract}".lower()) for pid, p in self.papers.items()]

    def resolve(self, question: Question, source: Path | str) -> list[Paper]:
        """The question's relevant papers, in the order the row lists them."""
        found: list[Paper] = []
        for ref in question.relevant:
            paper = self.papers[self._one(ref, f"{source}:{question.line}")]
            if paper not in found:
                found.append(paper)
        return found

    def _one(self, ref: str | Contains, where: str) -> str:
        if isinstance(ref, str):
            if ref not in self.papers:
                raise QuestionFileError(f"{where}: no paper with id {ref!r} in the index.")
            return ref
        needle = ref.contains.lower()
        matches = [pid for pid, text in self._texts if needle in text]
        if len(matches) == 1:
            return matches[0]
        if not matches:
            raise QuestionFileError(
                f"{where}: no indexed paper contains {ref.contains!r}. "
                "Check the text, or ingest the paper list it is from."
            )
        titles = "; ".join(self.papers[pid].title for pid in matches[:3])
        raise QuestionFileError(
            f"{where}: {len(matches)} papers contain {ref.contains!r} ({titles}). "
            "Use a longer piece of text that only one of them contains."
        )
