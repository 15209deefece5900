"""How well the statement check separates supported from unsupported statements.

    python eval/check_statements.py [--statements eval/statements/labelled.jsonl] [--sweep]

Each row of the file is a statement a model might write about one bundled paper, labelled
by hand as supported by that paper's abstract or not (``eval/statements/labelled.jsonl``).
The check (``rag.answer.support``) keeps or removes each one; this prints its precision (of the
statements it keeps, how many are supported), its recall (of the supported statements, how
many it keeps) and the unsupported statements it let through, by kind. ``--sweep`` repeats
that over the check's thresholds.
"""

from __future__ import annotations

import argparse
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from pydantic import BaseModel, ConfigDict  # noqa: E402

from rag.evaluation import (  # noqa: E402
    Embedder,
    read_papers,
    split_sentences,
    support,
)

BUNDLED = ROOT / "rag" / "data" / "icml2026_abstracts.txt"


class Row(BaseModel):
    model_config = ConfigDict(extra="forbid")

    paper: str
    statement: str
    supported: bool
    kind: str = ""
    note: str = ""


@dataclass
class Case:
    row: Row
    abstract: support.Abstract
    vector: object


def load(path: Path, embedder: Embedder) -> list[Case]:
    papers = read_papers(BUNDLED).papers
    rows = [Row.model_validate_json(line) for line in path.read_text().splitlines() if line]
    cases = []
    for row in rows:
        needle = row.paper.removeprefix("contains:").lower()
        matches = [p for p in papers if needle in f"{p.title}\n{p.abstract}".lower()]
        if len(matches) != 1:
            raise SystemExit(f"{row.paper!r} matches {len(matches)} papers")
        p = matches[0]
        sentences = split_sentences(p.abstract) or [p.abstract]
        abstract = support.Abstract.of(
            1, p.title, p.abstract, embedder.embed(sentences), embedder.embed
        )
        cases.append(Case(row, abstract, embedder.embed_query(support.plain(row.statement))))
    return cases


def kept(case: Case) -> bool:
    statement = support.Statement(case.row.statement, (1,), 0)
    return support.judge(statement, case.vector, {1: case.abstract}).kept  # type: ignore[arg-type]


def score(cases: list[Case]) -> dict[str, float]:
    tp = sum(1 for c in cases if kept(c) and c.row.supported)
    fp = sum(1 for c in cases if kept(c) and not c.row.supported)
    supported = sum(1 for c in cases if c.row.supported)
    return {
        "precision": tp / (tp + fp) if tp + fp else 1.0,
        "recall": tp / supported if supported else 1.0,
        "let_through": fp,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--statements", type=Path, default=ROOT / "eval/statements/labelled.jsonl")
    parser.add_argument("--sweep", action="store_true", help="try other thresholds too")
    parser.add_argument("--show", action="store_true", help="print every wrong decision")
    args = parser.parse_args(argv)
    cases = load(args.statements, Embedder())
    labels = Counter("supported" if c.row.supported else "unsupported" for c in cases)
    print(f"{len(cases)} statements: {dict(labels)}")
    result = score(cases)
    print(
        f"check (similarity >= {support.SIMILARITY_MIN}, paraphrase allowance "
        f"{support.PARAPHRASE_ALLOWANCE}): precision {result['precision']:.3f}, "
        f"recall {result['recall']:.3f}, unsupported kept {result['let_through']}"
    )
    by_kind: Counter[str] = Counter()
    wrong_kind: Counter[str] = Counter()
    for c in cases:
        by_kind[c.row.kind] += 1
        if kept(c) != c.row.supported:
            wrong_kind[c.row.kind] += 1
            if args.show:
                verdict = "kept" if kept(c) else "removed"
                statement = support.Statement(c.row.statement, (1,), 0)
                reason = support.judge(statement, c.vector, {1: c.abstract}).reason  # type: ignore[arg-type]
                print(f"  {verdict:7} [{c.row.kind}] {c.row.statement}  -- {reason}")
    for kind in sorted(by_kind):
        print(f"  {kind:20} {by_kind[kind] - wrong_kind[kind]}/{by_kind[kind]} right")
    if args.sweep:
        print("similarity  allowance             precision  recall  unsupported_kept")
        allowances = [
            (),
            ((0.7, 1),),
            ((0.6, 1), (0.75, 2)),
            ((0.7, 1), (0.8, 2)),
            ((0.65, 1), (0.75, 2), (0.85, 3)),
        ]
        for allowance in allowances:
            for sim in (0.4, 0.5, 0.6):
                support.SIMILARITY_MIN, support.PARAPHRASE_ALLOWANCE = sim, allowance
                r = score(cases)
                print(
                    f"{sim:10.2f}  {str(allowance):20}  {r['precision']:9.3f}  {r['recall']:6.3f}  "
                    f"{int(r['let_through']):16d}"
                )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
