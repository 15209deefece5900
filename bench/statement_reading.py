"""The local model's reading of a removed or held-back statement, on the labelled statements.

    python bench/statement_reading.py --split dev      # the bars, the chosen one marked
    python bench/statement_reading.py --split test     # report only
    python bench/statement_reading.py --split dev --all   # also read every statement (AUC)

Each labelled statement of the split's corpora (``eval/statements/NAME.jsonl``: supported
or not, written from the abstracts alone) is checked as an answer's statement citing its
paper (``support.judge``). Those the word check removes for their wording alone
(``support.Shortfall``) are read by the local model against the abstract ("Does the
abstract support the statement?", ``judge.ASK_SUPPORTS``), as the product does with
``checks.judge_statements``. Printed: precision and recall of the statements kept (a kept
statement is right when it is supported), by the word check alone and with the reading at
each bar; with ``--all``, the reading's AUC over every statement.

Then the statements the word check keeps but the product holds back for joining words of two
sentences (``support.joined_words``) or for the sentence they rest on turning away from them
(``support.turned``), of the labelled statements and of the blends set
(``eval/blends/NAME.jsonl``: true combinations of two sentences and false blends): each read
the same way, printed per bar as the supported ones that would go and the unsupported ones
that would (``judge.JOINED`` marked). Writes ``bench/out/statement_reading-SPLIT.json``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from list_judge import auc  # noqa: E402

from eval import indexes  # noqa: E402
from eval.corpora import CORPORA  # noqa: E402
from rag.evaluation import Embedder, judge, split_sentences, support  # noqa: E402
from rag.types import Paper  # noqa: E402

BARS = (2.0, 2.5, 3.0, 3.5, 4.0)


def rows_of(split: str, embedder: Embedder) -> list[dict]:
    """Each labelled statement with its paper and the word check's decision."""
    rows = []
    for corpus in (c for c in CORPORA if c.split == split):
        papers = {}
        for line in corpus.path.read_text(encoding="utf-8").splitlines():
            p = json.loads(line)
            papers[p["id"]] = Paper(p["id"], p["title"], p["abstract"])
        lines = [
            ("labelled", line)
            for line in (REPO / "eval" / "statements" / f"{corpus.name}.jsonl")
            .read_text(encoding="utf-8")
            .splitlines()
        ] + [
            ("blends", line)
            for line in (REPO / "eval" / "blends" / f"{corpus.name}.jsonl")
            .read_text(encoding="utf-8")
            .splitlines()
        ]
        for kind, line in lines:
            r = json.loads(line)
            paper = papers[r["paper"].removeprefix("id:")]
            sentences = split_sentences(paper.abstract) or [paper.abstract]
            abstract = support.Abstract.of(
                1, paper.title, paper.abstract, embedder.embed(sentences), embedder.embed
            )
            statement = support.Statement(r["statement"], (1,), 0)
            vector = embedder.embed_query(support.plain(r["statement"]))
            verdict = support.judge(statement, vector, {1: abstract})
            rows.append(
                {
                    "set": kind,
                    "corpus": corpus.name,
                    "paper": paper,
                    "statement": r["statement"],
                    "supported": bool(r["supported"]),
                    "kind": r.get("kind", ""),
                    "kept": verdict.kept,
                    "shortfall": isinstance(verdict.reason, support.Shortfall),
                    "joined": verdict.kept and bool(support.joined_words(r["statement"], abstract)),
                    "turned": verdict.kept
                    and bool(support.turned(r["statement"], verdict.sentences[0])),
                    "reason": verdict.reason,
                }
            )
    return rows


def scores(rows: list[dict], bar: float | None) -> tuple[float, float, int, int]:
    """Precision, recall, supported kept, unsupported kept: the word check alone (``bar``
    None), or with a removed statement read at ``bar`` or more kept."""

    def kept(r: dict) -> bool:
        if r["kept"]:
            return True
        return bar is not None and r["shortfall"] and r["reading"] >= bar

    right = sum(1 for r in rows if kept(r) and r["supported"])
    wrong = sum(1 for r in rows if kept(r) and not r["supported"])
    supported = sum(1 for r in rows if r["supported"])
    return right / max(1, right + wrong), right / max(1, supported), right, wrong


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--split", choices=("dev", "test"), default="dev")
    parser.add_argument("--all", action="store_true", help="read every statement (AUC)")
    args = parser.parse_args(argv)

    embedder = Embedder()
    every = rows_of(args.split, embedder)
    rows = [r for r in every if r["set"] == "labelled"]
    first = next(c for c in CORPORA if c.split == args.split)
    reader = indexes.open_index(indexes.BENCH_OUT / f"corpus-{first.name}", [first.path]).judge(
        "local", "statements"
    )
    assert reader is not None, "the local model cannot judge here"
    started, read = time.perf_counter(), 0
    for r in every:
        r["reading"] = None
        if (
            args.all
            or r["joined"]
            or r["turned"]
            or (not r["kept"] and r["shortfall"] and r["set"] == "labelled")
        ):
            r["reading"] = reader.supports(r["statement"], r["paper"])
            read += 1
    seconds = (time.perf_counter() - started) / max(1, read)
    removed = [r for r in rows if not r["kept"]]
    short = [r for r in removed if r["shortfall"]]
    print(
        f"{args.split}: {len(rows)} labelled statements ({sum(r['supported'] for r in rows)} "
        f"supported); the word check removes {len(removed)}, {len(short)} for their wording "
        f"alone ({sum(r['supported'] for r in short)} of them supported); {read} read, "
        f"{seconds:.1f} s each"
    )
    print("                         precision  recall  supported kept  unsupported kept")
    p, rc, right, wrong = scores(rows, None)
    print(f"word check alone         {p:9.3f}  {rc:6.3f}  {right:14d}  {wrong:16d}")
    for bar in BARS:
        p, rc, right, wrong = scores(rows, bar)
        mark = "  <- judge.SUPPORTS" if bar == judge.SUPPORTS else ""
        print(f"with the reading >= {bar:<4} {p:9.3f}  {rc:6.3f}  {right:14d}  {wrong:16d}{mark}")
    if args.all:
        pos = [r["reading"] for r in rows if r["supported"]]
        neg = [r["reading"] for r in rows if not r["supported"]]
        print(f"the reading alone, every statement: AUC {auc(pos, neg):.3f}")
    for r in short if args.split == "dev" else ():  # test: summary lines only
        if r["reading"] >= min(BARS) and not r["supported"]:
            print(f"  read {r['reading']:.2f}, unsupported ({r['kind']}): {r['statement'][:100]}")
    print("kept by the word check, held back and read:")
    for name in ("labelled", "blends"):
        kept = [r for r in every if r["set"] == name and r["kept"]]
        print(f"  {name}: {len(kept)} kept ({sum(r['supported'] for r in kept)} supported)")
        for why, held in (
            ("joining two sentences", [r for r in kept if r["joined"]]),
            ("its sentence turning", [r for r in kept if r["turned"] and not r["joined"]]),
            ("either", [r for r in kept if r["joined"] or r["turned"]]),
        ):
            print(
                f"    for {why}: {len(held)} held back "
                f"({sum(r['supported'] for r in held)} supported)"
            )
            for bar in BARS:
                lost = sum(1 for r in held if r["supported"] and r["reading"] < bar)
                gone = sum(1 for r in held if not r["supported"] and r["reading"] < bar)
                mark = "  <- judge.JOINED" if bar == judge.JOINED else ""
                print(
                    f"      at {bar:<4} supported that go {lost:3d}, "
                    f"unsupported that go {gone:3d}{mark}"
                )
    out = indexes.BENCH_OUT / f"statement_reading-{args.split}.json"
    for r in every:
        r["paper"] = r["paper"].paper_id
    out.write_text(json.dumps(every, indent=1), encoding="utf-8")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
