"""What the local model reads of a question asked of one paper, against the word checks.

    python bench/premise_judge.py --split dev     # readings + the thresholds' grid
    python bench/premise_judge.py --split test    # report only: summary lines
    python bench/premise_judge.py --find --split dev   # the written find questions
    python bench/premise_judge.py --described --split dev   # questions describing a paper

A question asked of one paper presumes something: "Which paper proves a linear convergence
rate for stochastic L-BFGS on nonconvex objectives?" presumes such a paper is indexed, and
"What Dice score does the vision transformer for medical image segmentation report?" that
such a paper is and gives the number. For each question of the corpora's kinds ``specific``,
``numeric`` (answerable), ``unstated`` (the paper is indexed, the abstract does not give
it) and ``false_premise`` (no indexed paper is the one described), the product's sources are
found as the chat finds them, the word checks' verdict is taken (``answering.find_gap``),
and the local model is asked of the closest sources (``rag.answer.judge``): whether the paper
is the one the question is about, and whether the abstract states the answer. Printed: the
AUCs, and what the product's ``answering.judged_gap`` leads with, with the word checks alone
and judged (per kind: false premises answered "no indexed paper", facts an abstract does not
give answered "the abstract does not say", answerable questions let through); on dev also
for other thresholds (``rules.JUDGE_IS_IT``, ``rules.JUDGE_ANSWERS``). The readings are kept
in bench/out/premise_readings-SPLIT.json; ``--reuse`` reads them again instead of the model.
~15 min a split.

``--find`` reads ``eval/premises/`` instead: per corpus, 24 questions asking which paper does
something, written from the abstracts alone, 12 that one abstract states in other words
(kind ``specific``) and 12 near misses that change one detail of an abstract so that no
paper does it (``false_premise``: a result reversed, a method, dataset, setting or
application swapped). ~5 min a split.

``--described`` reads ``eval/described/`` instead: per corpus, 16 questions that describe
their paper by what it does instead of naming it, 10 asking a detail its abstract does not
give (kind ``unstated``: "How many GPUs are used for the model-parallel training of the
network that applies first-order perturbation theory to ...?") and 6 it does (``specific``).
~4 min a split.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from dataclasses import dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from list_judge import Key, Recording, auc  # noqa: E402
from list_membership import open_corpus  # noqa: E402

from eval.corpora import CORPORA  # noqa: E402
from rag.evaluation import answering, handlers  # noqa: E402
from rag.evaluation import judge as judges  # noqa: E402

KINDS = ("specific", "numeric", "unstated", "false_premise")


@dataclass
class Asked:
    corpus: str
    qid: str
    kind: str
    text: str
    sources: list
    gap: object  # the word checks' Gap or None
    asking: list[str]  # the index's venues: words that ask, not presume

    def verdict(self, judge: Recording | None) -> str | None:
        """What the answer leads with: "refused" (nothing relevant), "no_paper", "unstated"
        or None (answered)."""
        if not self.sources:
            return "refused"
        gap = self.gap if judge is None else answering.judged_gap(
            self.text, self.sources, self.gap, judge, self.asking)  # fmt: skip
        return gap.coverage if gap is not None else None

    def passed(self, verdict: str | None) -> bool:
        if self.kind == "false_premise":
            return verdict in ("no_paper", "refused")
        if self.kind == "unstated":
            return verdict == "unstated"
        return verdict is None


def asked(
    split: str, kept: dict[Key, float], reuse: bool, written: str = ""
) -> tuple[list[Asked], Recording]:
    """Every question of the split's corpora with its sources and the word checks' gap, and
    the judge that reads them (each question read once here, as the product reads it)."""
    rows: list[Asked] = []
    recording = Recording(None, kept)
    for corpus in (c for c in CORPORA if c.split == split):
        a = open_corpus(corpus.name)
        # loaded only if a reading is not kept (with --reuse)
        recording.judge = a.judge("local", "premises")
        assert recording.judge is not None, "the local model cannot judge here"
        path = REPO / "eval" / written / f"{corpus.name}.jsonl" if written else corpus.questions
        qs = [json.loads(line) for line in path.read_text().splitlines()]
        for q in (q for q in qs if q["kind"] in KINDS):
            text = q["question"]
            hits = a.search(text, a.settings.retrieval.k)
            relevant = handlers.relevant_hits(a, text, hits)
            if a.reader is not None:
                relevant = answering.read(relevant, text, a.reader)
            sources = answering.build_sources(relevant, a.sentence_vectors, question=text)
            venues = list(a.retriever.corpus.venues)
            gap = answering.find_gap(text, sources, venues, a.verifier) if sources else None
            row = Asked(corpus.name, q["id"], q["kind"], text, sources, gap, venues)
            row.verdict(recording)
            rows.append(row)
    return rows, recording


def line(label: str, rows: list[Asked], judge: Recording | None) -> str:
    kinds = sorted({r.kind for r in rows})
    got = {k: sum(r.passed(r.verdict(judge)) for r in rows if r.kind == k) for k in kinds}
    return f"{label}: " + ", ".join(
        f"{k} {got[k]}/{sum(r.kind == k for r in rows)}" for k in kinds)  # fmt: skip


def leads(rows: list[Asked], judge: Recording | None) -> str:
    """Per kind, how many answers lead with each verdict."""
    parts = []
    for kind in sorted({r.kind for r in rows}):
        counts: dict[str, int] = {}
        for r in (r for r in rows if r.kind == kind):
            verdict = r.verdict(judge) or "answered"
            counts[verdict] = counts.get(verdict, 0) + 1
        parts.append(f"{kind} " + " ".join(f"{v} {n}" for v, n in sorted(counts.items())))
    return "; ".join(parts)


def report(rows: list[Asked], recording: Recording, grid: bool) -> None:
    def best(r: Asked) -> float:
        read = r.sources[: judges.READ]
        return max((recording.is_it(r.text, s.paper) for s in read), default=-9.0)

    def first(r: Asked) -> float:
        return answering.states_answer(recording, r.text, r.sources[0].paper) if r.sources else -9.0

    answerable = [r for r in rows if r.kind in ("specific", "numeric")]
    unstated = [r for r in rows if r.kind == "unstated"]
    false = [r for r in rows if r.kind == "false_premise"]
    print(f"{len(answerable)} answerable, {len(unstated)} unstated, {len(false)} false premises")
    held = auc([best(r) for r in answerable + unstated], [best(r) for r in false])
    print(f"AUC, is it (best of the closest): answerable and unstated over false {held:.3f}")
    if unstated:
        held = auc([first(r) for r in answerable], [first(r) for r in unstated])
        print(f"AUC, answers (closest): answerable over unstated {held:.3f}")
    print(line("word checks alone", rows, None))
    bars = (f"is it {judges.IS_IT}, answers {judges.ANSWERS}, which paper: is it "
            f"{judges.IS_IT_FIND}, says {judges.SAYS}")  # fmt: skip
    print(line(f"judged ({bars})", rows, recording))
    print(f"  leads, word checks alone: {leads(rows, None)}")
    print(f"  leads, judged: {leads(rows, recording)}")
    if not grid:
        return
    chosen = judges.IS_IT, judges.ANSWERS, judges.IS_IT_FIND, judges.SAYS
    try:
        if not unstated:  # the find questions: the bars of a question asking which paper
            for judges.IS_IT_FIND in (1.0, 1.25, 1.5, 1.75, 2.0):
                for judges.SAYS in (float("-inf"), 1.5, 1.75, 2.0, 2.25):
                    label = f"  which paper: is it {judges.IS_IT_FIND}, says {judges.SAYS}"
                    print(line(label, rows, recording))
            return
        for judges.IS_IT in (0.5, 0.75, 1.0, 1.25, 1.5):
            for judges.ANSWERS in (float("-inf"), 0.0, 0.5, 0.75, 1.0):
                print(line(f"  is it {judges.IS_IT}, answers {judges.ANSWERS}", rows, recording))
    finally:
        judges.IS_IT, judges.ANSWERS, judges.IS_IT_FIND, judges.SAYS = chosen


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--split", choices=("dev", "test"), required=True)
    p.add_argument("--reuse", action="store_true", help="the kept readings, not the model")
    p.add_argument("--find", action="store_true", help="the written find questions")
    p.add_argument("--described", action="store_true", help="questions describing a paper")
    args = p.parse_args(argv)
    written = "premises" if args.find else "described" if args.described else ""
    kind = {"premises": "find", "described": "described"}.get(written, "premise")
    name = f"{kind}_readings-{args.split}.json"
    out = REPO / "bench" / "out" / name
    kept: dict[Key, float] = {}
    if args.reuse:
        kept = {tuple(k): v for k, v in json.loads(out.read_text())}  # type: ignore[misc]
    started = time.perf_counter()
    rows, recording = asked(args.split, kept, args.reuse, written)
    if not args.reuse:
        print(f"{(time.perf_counter() - started) / len(rows):.1f} s a question read")
    report(rows, recording, grid=args.split == "dev")
    out.parent.mkdir(parents=True, exist_ok=True)  # with the readings the AUCs took
    out.write_text(json.dumps([[list(k), v] for k, v in kept.items()]) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
