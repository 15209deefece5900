"""Complete lists judged by the local model against the cosine-and-words bars, in one run.

    python bench/list_judge.py --split dev            # iclr2018, colt2022, aistats2016
    python bench/list_judge.py --split test           # report only: never read its lists
    python bench/list_judge.py --split dev --grid     # also the thresholds' grid (dev only)
    python bench/list_judge.py --split dev --grid --reuse --depth 8   # kept readings, 8 deep

The questions are each corpus's list questions with every member written down
(``eval/lists/NAME.jsonl``: ten lists and ten topics no paper covers, written from the
abstracts alone; and the ``list`` rows of ``eval/questions/NAME.jsonl``). For each, the
product's ``find_all`` is run twice: with the local model as judge (``rag.answer.judge``,
the default with the local backend) and with the bars alone (the extractive backend's
lists). Printed per corpus and pooled: mean recall and precision over the lists (an empty
answer has precision 0), lists answered exactly, topics no paper covers for which some paper
was listed, papers listed rightly and wrongly, and seconds per question. ``--grid`` also
prints, from the same readings, what other thresholds (``rules.JUDGE_FIRST``,
``rules.JUDGE_MEMBER``) would list, and the AUCs the module docstring quotes; ``--depth N``
reads the N closest candidates for the grid instead of ``rules.JUDGED``. The readings are
kept in bench/out/list_readings-SPLIT.json; ``--reuse`` reads them again instead of the
model (the readings a run lacks are still asked). ~20 min a split.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from list_membership import Question, line, open_corpus, questions, score  # noqa: E402

from eval.corpora import CORPORA  # noqa: E402
from rag.evaluation import judge as judges  # noqa: E402
from rag.evaluation import lists as listing  # noqa: E402

Listed = dict[tuple[str, str], set[str]]
Key = tuple[str, str, str]  # question, paper id, what is asked


# A judge that remembers every reading, (question, paper id, what is asked) -> log-odds;
# ``kept`` readings are read back instead of asking the judge (``None``: all must be)
Recording = judges.Remembered


def auc(positives: list[float], negatives: list[float]) -> float:
    """The chance a positive scores above a negative (ties count half)."""
    if not positives or not negatives:
        return float("nan")
    wins = sum((p > n) + 0.5 * (p == n) for p in positives for n in negatives)
    return wins / (len(positives) * len(negatives))


def grid(rows: list[tuple[Question, list[tuple[str, float, float]]]]) -> None:
    """What other thresholds would list, from the readings of each question's candidates
    (paper id, log-odds, cosine), closest first; and the AUCs."""
    qs = [q for q, _ in rows]
    member = [s for q, cs in rows for pid, s, _ in cs if pid in q.members]
    other = [s for q, cs in rows for pid, s, _ in cs if pid not in q.members]
    cos_m = [c for q, cs in rows for pid, _, c in cs if pid in q.members]
    cos_o = [c for q, cs in rows for pid, _, c in cs if pid not in q.members]
    print(f"members first, AUC: model {auc(member, other):.3f}, cosine {auc(cos_m, cos_o):.3f}")
    best = [(q.kind == "list", max((s for _, s, _ in cs), default=-9.0),
             max((c for _, _, c in cs), default=-1.0)) for q, cs in rows]  # fmt: skip
    present = auc([s for k, s, _ in best if k], [s for k, s, _ in best if not k])
    present_cos = auc([c for k, _, c in best if k], [c for k, _, c in best if not k])
    print(f"a list's best candidate above an absent topic's, AUC: model {present:.3f}, "
          f"cosine {present_cos:.3f}")  # fmt: skip
    for first in (1.25, 1.5, 1.75):
        for member_bar in (1.0, 1.25, 1.5):
            if member_bar > first:
                continue
            listed: Listed = {}
            for q, cs in rows:
                if max((s for _, s, _ in cs), default=-9.0) >= first:
                    listed[(q.corpus, q.qid)] = {pid for pid, s, _ in cs if s >= member_bar}
            print(line(f"  first {first}, member {member_bar}", score(listed, qs)))


def run(split: str, show_grid: bool, depth: int, kept: dict[Key, float]) -> int:
    names = [c.name for c in CORPORA if c.split == split]
    pooled_q: list[Question] = []
    pooled: dict[str, Listed] = {"model": {}, "bars": {}}
    readings: list[tuple[Question, list[tuple[str, float, float]]]] = []
    seconds = 0.0
    for name in names:
        a = open_corpus(name)
        judge = a.judge("local")
        if judge is None:
            print("the local model cannot judge here (checks.judge_lists off?)")
            return 1
        recording = Recording(judge, kept)
        qs = questions(name)
        listed: dict[str, Listed] = {"model": {}, "bars": {}}
        corpus = a.retriever.corpus
        vectors = a.retriever.vectors(corpus)
        for q in qs:
            key = (q.corpus, q.qid)
            started = time.perf_counter()
            found = a.find_all(q.text, judge=recording)
            seconds += time.perf_counter() - started
            listed["model"][key] = {p.paper.paper_id for p in found.papers}
            listed["bars"][key] = {p.paper.paper_id for p in a.find_all(q.text).papers}
            if show_grid:
                topic = listing.list_topic(q.text)
                cands = listing.candidates_for(corpus, a.sentence_vectors, vectors, topic,
                                               found.filters)  # fmt: skip
                closest = sorted(cands, key=lambda c: -c.relevance)[:depth]
                readings.append((q, [(c.paper.paper_id, recording.member(q.text, c.paper),
                                      c.relevance) for c in closest]))  # fmt: skip
        print(f"{name} ({split})")
        for label, got in listed.items():
            print(line(f"  {label}", score(got, qs)))
            pooled[label].update(got)
        pooled_q += qs
    print(f"pooled ({split}, {len(pooled_q)} questions, {seconds / len(pooled_q):.1f} s a "
          f"question judged)")  # fmt: skip
    for label, got in pooled.items():
        print(line(f"  {label}", score(got, pooled_q)))
    if show_grid:
        grid(readings)
    return 0


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--split", choices=("dev", "test"), required=True)
    p.add_argument("--grid", action="store_true", help="the thresholds' grid (dev only)")
    p.add_argument("--depth", type=int, default=judges.JUDGED, help="candidates read for --grid")
    p.add_argument("--reuse", action="store_true", help="the kept readings, not the model")
    args = p.parse_args(argv)
    if args.grid and args.split == "test":
        p.error("--grid reads the readings to choose thresholds: dev only")
    out = REPO / "bench" / "out" / f"list_readings-{args.split}.json"
    kept: dict[Key, float] = {}
    if args.reuse and out.exists():
        kept = {tuple(k): v for k, v in json.loads(out.read_text())}  # type: ignore[misc]
    try:
        return run(args.split, args.grid, args.depth, kept)
    finally:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps([[list(k), v] for k, v in kept.items()]) + "\n")


if __name__ == "__main__":
    sys.exit(main())
