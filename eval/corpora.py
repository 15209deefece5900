"""Evaluation corpora that no check was written from: slices of other conferences, frozen.

Each corpus is a seeded sample of one venue-year of ``../shared/data/ml_abstracts.jsonl``
(or of the SciFact abstracts, outside machine learning), written once to
``eval/corpora/NAME.jsonl`` and committed, so the questions written from it stay valid.
``dev`` corpora may be read answer by answer while the checks change; ``test`` corpora are
only run to report figures.

    python eval/corpora.py            # write the corpora that are missing
    python eval/corpora.py --check    # every committed corpus still matches its recipe
"""

from __future__ import annotations

import argparse
import ast
import csv
import json
import random
import re
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
SHARED = REPO.parent / "shared"
ML = SHARED / "data" / "ml_abstracts.jsonl"
SCIFACT = SHARED / "bench" / "scifact" / "corpus.csv"
SCIFACT_CLAIMS = SHARED / "bench" / "scifact" / "claims_train.csv"
OUT = REPO / "eval" / "corpora"
KEPT = ("id", "venue", "year", "title", "abstract", "authors", "url")


@dataclass(frozen=True)
class Corpus:
    name: str
    split: str  # "dev" or "test"
    venue: str  # a venue of the ML list, or "SciFact"
    year: int | None
    size: int
    seed: int
    # corpora whose papers this one leaves out, and (SciFact) whether it leaves out every
    # document a training claim cites: the trained models have read those
    apart: tuple[str, ...] = ()
    untrained: bool = False

    @property
    def path(self) -> Path:
        return OUT / f"{self.name}.jsonl"

    @property
    def questions(self) -> Path:
        return REPO / "eval" / "questions" / f"{self.name}.jsonl"


CORPORA = (
    Corpus("iclr2018", "dev", "ICLR", 2018, 36, 2318),
    Corpus("colt2022", "dev", "COLT", 2022, 36, 2322),
    Corpus("aistats2016", "dev", "AISTATS", 2016, 36, 2316),
    Corpus("corl2023", "test", "CoRL", 2023, 36, 2323),
    Corpus("neurips2003", "test", "NeurIPS", 2003, 36, 2303),
    Corpus("scifact", "test", "SciFact", None, 36, 2399),
    Corpus("scifact-dev", "dev", "SciFact", None, 36, 2398, apart=("scifact",), untrained=True),
)
BY_NAME = {c.name: c for c in CORPORA}


def corpus_papers(corpus: Corpus) -> list[dict[str, Any]]:
    """The corpus's papers, drawn from the shared data by its recipe."""
    pool = list(_scifact() if corpus.venue == "SciFact" else _ml(corpus.venue, corpus.year))
    pool = [r for r in pool if r["title"].strip() and 500 <= _length(r) <= 2200]
    left_out = {p["id"] for name in corpus.apart for p in corpus_papers(BY_NAME[name])}
    if corpus.untrained:
        left_out |= _claimed()
    pool = [r for r in pool if r["id"] not in left_out]
    pool.sort(key=lambda r: r["id"])
    return random.Random(corpus.seed).sample(pool, corpus.size)


def _length(row: dict[str, Any]) -> int:
    """The abstract's length as the sample was first drawn: SciFact's sentences unspaced."""
    return len(row.pop("_unspaced", row["abstract"]))


def _ml(venue: str, year: int | None) -> Iterator[dict[str, Any]]:
    with ML.open(encoding="utf-8") as lines:
        for line in lines:
            row = json.loads(line)
            if row["venue"] == venue and row["year"] == year:
                yield {k: row[k] for k in KEPT if k in row}


def _scifact() -> Iterator[dict[str, Any]]:
    csv.field_size_limit(sys.maxsize)
    with SCIFACT.open(encoding="utf-8", newline="") as f:
        for row in csv.DictReader(f):
            sentences = scifact_sentences(row["abstract"])
            yield {
                "id": f"scifact-{row['doc_id']}",
                "venue": "SciFact",
                "title": row["title"].strip(),
                "abstract": " ".join(s.strip() for s in sentences),
                # as first drawn: literal_eval joined the items without spaces
                "_unspaced": " ".join(s.strip() for s in ast.literal_eval(row["abstract"])),
            }


def _claimed() -> set[str]:
    """The SciFact documents a training claim cites or takes its evidence from."""
    csv.field_size_limit(sys.maxsize)
    with SCIFACT_CLAIMS.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    docs = {r["evidence_doc_id"] for r in rows if r["evidence_doc_id"]}
    docs |= {d for r in rows for d in re.findall(r"\d+", r["cited_doc_ids"])}
    return {f"scifact-{d}" for d in docs}


_QUOTED = re.compile(r"'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"")


def scifact_sentences(literal: str) -> list[str]:
    """The sentences of SciFact's abstract field, a list literal whose items are separated by
    line breaks, not commas (so a plain literal_eval would join them without spaces)."""
    return [ast.literal_eval(q) for q in _QUOTED.findall(literal)]


def eval_paper_ids() -> set[str]:
    """Every paper of every corpus: what no training set may contain."""
    ids: set[str] = set()
    for corpus in CORPORA:
        ids.update(json.loads(line)["id"] for line in corpus.path.read_text().splitlines())
    return ids


def write(corpus: Corpus) -> None:
    text = "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in corpus_papers(corpus))
    corpus.path.parent.mkdir(parents=True, exist_ok=True)
    corpus.path.write_text(text, encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="compare, write nothing")
    args = parser.parse_args(argv)
    bad = 0
    for corpus in CORPORA:
        if args.check:
            want = [r["id"] for r in corpus_papers(corpus)]
            have = [json.loads(x)["id"] for x in corpus.path.read_text().splitlines()]
            bad += want != have
            print(f"{corpus.name}: {'ok' if want == have else 'DIFFERS'}")
        elif not corpus.path.exists():
            write(corpus)
            print(f"wrote {corpus.path.relative_to(REPO)}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
