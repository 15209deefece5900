"""Check a question file written for an evaluation corpus against that corpus's abstracts.

    python eval/verify_questions.py NAME     # eval/questions/NAME.jsonl on eval/corpora/NAME.jsonl
    python eval/verify_questions.py NAME --statements   # eval/statements/NAME.jsonl
    python eval/verify_questions.py NAME --premises     # eval/premises/NAME.jsonl
    python eval/verify_questions.py NAME --details      # eval/details/NAME.jsonl
    python eval/verify_questions.py NAME --described    # eval/described/NAME.jsonl

Needs only the standard library. A question file passes when every row has a known kind, every
paper it names is in the corpus, every gold fact is copied from a relevant paper's abstract or
title, a comparison gives each compared paper a fact of its own, a follow-up has the question
it follows, and the file has at least the planned number of questions of each kind.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
KINDS = {
    "specific": 10,
    "numeric": 6,
    "unstated": 8,
    "false_premise": 8,
    "comparison": 6,
    "list": 6,
    "followup": 6,
}
FIELDS = {
    "id", "question", "relevant", "answerable", "facts", "history", "kind", "note",
}  # fmt: skip
STATEMENT_FIELDS = {"paper", "statement", "supported", "kind", "note"}
PREMISE_FIELDS = {"id", "question", "relevant", "kind", "source", "note"}
PREMISES_EACH = 12  # questions one abstract states, and near misses none does
DETAIL_FIELDS = {"id", "question", "relevant", "kind", "source", "wrong", "facts", "note"}
DETAILS = {"wrong_detail": 12, "specific": 8}  # per corpus: wrong details, and controls
DESCRIBED = {"unstated": 10, "specific": 6}  # per corpus: details not given, and controls
DESCRIBED_FIELDS = {"id", "question", "relevant", "kind", "facts", "note"}


def normal(text: str) -> str:
    text = unicodedata.normalize("NFKC", text).lower()
    return re.sub(r"\s+", " ", text).strip()


def load_corpus(name: str) -> dict[str, str]:
    path = REPO / "eval" / "corpora" / f"{name}.jsonl"
    papers = (json.loads(line) for line in path.read_text(encoding="utf-8").splitlines())
    return {p["id"]: normal(p["title"] + " \n " + p["abstract"]) for p in papers}


def ref_id(ref: object) -> str:
    return str(ref).removeprefix("id:")


def check_row(row: dict, texts: dict[str, str]) -> list[str]:
    problems = [f"unknown field {k!r}" for k in row if k not in FIELDS]
    kind = row.get("kind")
    if kind not in KINDS:
        problems.append(f"kind {kind!r} is not one of {sorted(KINDS)}")
    relevant = [ref_id(r) for r in row.get("relevant", [])]
    problems += [f"paper {r!r} is not in the corpus" for r in relevant if r not in texts]
    answerable = row.get("answerable", True)
    if kind == "false_premise":
        if answerable or relevant or row.get("facts"):
            problems.append("a false premise has answerable false, no relevant, no facts")
    elif not relevant:
        problems.append("an answerable question needs relevant papers")
    facts = row.get("facts", [])
    for fact in facts:
        if not any(normal(fact) in texts.get(r, "") for r in relevant):
            problems.append(f"fact {fact!r} is in no relevant abstract")
    if kind == "unstated" and facts:
        problems.append("an unstated question has no facts")
    if kind in ("specific", "numeric", "followup") and not facts:
        problems.append(f"a {kind} question needs facts")
    if kind == "numeric" and not any(re.search(r"\d", f) for f in facts):
        problems.append("a numeric question needs a fact holding a number")
    if kind == "comparison":
        if len(relevant) != 2:
            problems.append("a comparison names exactly two papers")
        for r in relevant:
            if not any(normal(f) in texts.get(r, "") for f in facts):
                problems.append(f"comparison: no fact of paper {r!r}")
    if kind == "followup" and len(row.get("history", [])) != 1:
        problems.append("a follow-up has one earlier question in history")
    if kind == "list" and facts:
        problems.append("a list question has no facts (relevant is the whole list)")
    if not row.get("note"):
        problems.append("note is empty: say why the answer is what it is")
    return problems


def check_file(path: Path, row_problems: Callable[[dict], list[str]], plan: dict[str, int]) -> int:
    """Every row of a question file through ``row_problems``, each id once, and at least
    ``plan``'s number of questions of each kind; prints each problem, returns 1 if any."""
    bad, kinds, ids = 0, Counter(), set()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        problems = row_problems(row)
        if row.get("id") in ids:
            problems.append(f"id {row.get('id')!r} is used twice")
        ids.add(row.get("id"))
        kinds[row.get("kind")] += 1
        for p in problems:
            print(f"{path.name}:{number}: {p}")
        bad += bool(problems)
    for kind, least in plan.items():
        if kinds[kind] < least:
            print(f"{path.name}: {kinds[kind]} {kind} questions, plan is at least {least}")
            bad += 1
    print(f"{path.name}: {sum(kinds.values())} questions {dict(kinds)}; {bad} problems")
    return 1 if bad else 0


def check_questions(name: str) -> int:
    texts = load_corpus(name)
    path = REPO / "eval" / "questions" / f"{name}.jsonl"
    return check_file(path, lambda row: check_row(row, texts), KINDS)


def check_statements(name: str) -> int:
    texts = load_corpus(name)
    path = REPO / "eval" / "statements" / f"{name}.jsonl"
    bad, labels = 0, Counter()
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
        if not line.strip():
            continue
        row = json.loads(line)
        problems = [f"unknown field {k!r}" for k in row if k not in STATEMENT_FIELDS]
        if ref_id(row.get("paper")) not in texts:
            problems.append(f"paper {row.get('paper')!r} is not in the corpus")
        if not isinstance(row.get("supported"), bool):
            problems.append("supported is true or false")
        labels[row.get("supported")] += 1
        for p in problems:
            print(f"{path.name}:{number}: {p}")
        bad += bool(problems)
    print(f"{path.name}: {sum(labels.values())} statements {dict(labels)}; {bad} problems")
    return 1 if bad else 0


def check_premises(name: str) -> int:
    """The find questions: each asks which paper does something; a ``specific`` one is
    answered by its ``source`` alone, a ``false_premise`` one changes a detail of its
    ``source`` so that no paper does it."""
    texts = load_corpus(name)
    sources: set[object] = set()

    def problems(row: dict) -> list[str]:
        found = [f"unknown field {k!r}" for k in row if k not in PREMISE_FIELDS]
        kind, source = row.get("kind"), row.get("source")
        if source not in texts:
            found.append(f"source {source!r} is not in the corpus")
        if kind == "specific" and row.get("relevant") != [source]:
            found.append("a question one abstract states has its source as relevant")
        elif kind == "false_premise" and row.get("relevant") != []:
            found.append("a near miss has no relevant paper")
        elif kind not in ("specific", "false_premise"):
            found.append(f"kind {kind!r} is not specific or false_premise")
        if not str(row.get("question", "")).startswith("Which paper "):
            found.append('a find question starts "Which paper "')
        if source in sources:
            found.append("a source is used twice")
        if not row.get("note"):
            found.append("note is empty: say what the abstract states, or what was changed")
        sources.add(source)
        return found

    path = REPO / "eval" / "premises" / f"{name}.jsonl"
    return check_file(path, problems, {"specific": PREMISES_EACH, "false_premise": PREMISES_EACH})


def check_details(name: str) -> int:
    """The questions asked of one paper: a ``wrong_detail`` one presumes a detail its
    ``source`` contradicts (the question's ``wrong`` words); a ``specific`` one, written the
    same way, is answered by gold ``facts`` copied from that abstract."""
    texts = load_corpus(name)

    def problems(row: dict) -> list[str]:
        found = [f"unknown field {k!r}" for k in row if k not in DETAIL_FIELDS]
        kind, source = row.get("kind"), row.get("source")
        if source not in texts or row.get("relevant") != [source]:
            found.append(f"source {source!r} is not the corpus's, or not the one relevant")
        if kind == "wrong_detail":
            if not row.get("wrong") or row["wrong"] not in row.get("question", ""):
                found.append("wrong is the question's own words that are false")
        elif kind == "specific":
            facts = row.get("facts") or []
            missing = [f for f in facts if normal(f) not in texts.get(source, "")]
            if not facts or missing:
                found.append(f"facts are copied from the abstract: {missing or 'none given'}")
        else:
            found.append(f"kind {kind!r} is not wrong_detail or specific")
        if not row.get("note"):
            found.append("note is empty: say what the abstract states instead")
        return found

    return check_file(REPO / "eval" / "details" / f"{name}.jsonl", problems, DETAILS)


def check_described(name: str) -> int:
    """The questions that describe one paper instead of naming it: an ``unstated`` one asks
    a detail its abstract does not give; a ``specific`` one, written the same way, is
    answered by gold ``facts`` copied from that abstract. No question holds its paper's
    title."""
    texts = load_corpus(name)
    titles = {pid: text.split(" \n ", 1)[0] for pid, text in texts.items()}

    def problems(row: dict) -> list[str]:
        found = [f"unknown field {k!r}" for k in row if k not in DESCRIBED_FIELDS]
        relevant = row.get("relevant") or []
        paper = relevant[0] if len(relevant) == 1 and relevant[0] in texts else None
        if paper is None:
            return [*found, f"relevant {relevant!r} is not one paper of the corpus"]
        if titles[paper] in normal(row.get("question", "")):
            found.append("the question names its paper's title: it describes the paper")
        facts = row.get("facts") or []
        if row.get("kind") == "specific":
            missing = [f for f in facts if normal(f) not in texts[paper]]
            if not facts or missing:
                found.append(f"facts are copied from the abstract: {missing or 'none given'}")
        elif row.get("kind") != "unstated" or facts:
            found.append("kind is unstated (no facts) or specific")
        if not row.get("note"):
            found.append("note is empty: say what the abstract does and does not state")
        return found

    return check_file(REPO / "eval" / "described" / f"{name}.jsonl", problems, DESCRIBED)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("name", help="corpus name, e.g. iclr2018")
    which = parser.add_mutually_exclusive_group()
    which.add_argument("--statements", action="store_true", help="check the statement file")
    which.add_argument("--premises", action="store_true", help="check the find questions")
    which.add_argument("--details", action="store_true", help="check the wrong-detail questions")
    which.add_argument("--described", action="store_true", help="check the described questions")
    args = parser.parse_args(argv)
    check = check_statements if args.statements else check_questions
    if args.details:
        check = check_details
    if args.described:
        check = check_described
    return (check_premises if args.premises else check)(args.name)


if __name__ == "__main__":
    sys.exit(main())
