"""Questions asked of one paper that presume a detail its abstract contradicts, answered.

    python bench/details.py --split dev              # eval/details/ of the dev corpora
    python bench/details.py --split test             # report only: summary lines
    python bench/details.py --split dev --off QUESTION_ALLOWANCE   # one rule turned off
    python bench/details.py --split dev --llm extractive

"What constant factor does the Huber-statistic uniformity tester lose relative to the
collisions tester?", of an abstract that says it matches it, names the paper rightly and
changes one detail: a result reversed, a comparison turned round, an ingredient, setting or
role swapped. ``eval/details/NAME.jsonl`` holds, per corpus, 12 such questions (kind
``wrong_detail``, with the question's ``wrong`` words) and 8 controls the abstract answers
(``specific``, with gold ``facts``), written from the abstracts alone by writers who had not
read the product. Each is asked as the chat asks it (default backend: local). Printed per
corpus:

- wrong detail said: an answer sentence that is no lead of the product's own ("The abstract
  does not say", "No indexed paper") holds every word of ``wrong`` (stemmed): the premise
  confirmed, the worst defect. An upper bound: a quoted abstract sentence that has the words
  in another role counts too (the extractive answers, which only quote: 6 of 36 on dev);
- wrong detail flagged: the answer leads with "the abstract does not say" or "no indexed
  paper";
- controls answered: the answer states each gold fact.

``--off RULE`` turns one entry of ``rag/answer/rules.py`` off first (``bench/rules.py``), for
an ablation in the same terms. Answers go to bench/out/details-SPLIT[-LLM][-RULE].json. ~2.5 min a
corpus with the local model.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

from rules import load_rules  # noqa: E402


def rows_of(name: str) -> list[dict]:
    path = REPO / "eval" / "details" / f"{name}.jsonl"
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]


def summary(records: list[dict]) -> str:
    wrong = [r for r in records if r["kind"] == "wrong_detail"]
    controls = [r for r in records if r["kind"] != "wrong_detail"]
    said = sum(bool(r["said"]) for r in wrong)
    flagged = sum(r["flagged"] for r in wrong)
    answered = sum(r["answered"] for r in controls)
    return (
        f"wrong detail said {said}/{len(wrong)}, flagged {flagged}/{len(wrong)}; "
        f"controls answered {answered}/{len(controls)}"
    )


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--split", choices=("dev", "test"), required=True)
    p.add_argument("--llm", default="local", choices=("local", "extractive"))
    p.add_argument("--off", default="", help="a rule of rag/answer/rules.py to turn off")
    args = p.parse_args(argv)
    rules = load_rules()
    if args.off:
        setattr(rules, args.off, rules.RULES[args.off].off)

    from eval import indexes, metrics
    from eval.corpora import CORPORA
    from rag.evaluation import tokenize

    lead = re.compile(r"^(the abstract does not say|no indexed paper)", re.I)
    out: list[dict] = []
    started = time.perf_counter()
    for corpus in [c for c in CORPORA if c.split == args.split]:
        index = indexes.BENCH_OUT / f"corpus-{corpus.name}"
        a = indexes.open_index(index, [corpus.path], llm=args.llm)
        for row in rows_of(corpus.name):
            answer = a.ask(row["question"])
            text = answer.text
            record = {"corpus": corpus.name, **row, "answer": text, "coverage": answer.coverage}
            if row["kind"] == "wrong_detail":
                wrong = set(tokenize(row["wrong"]))
                sentences = [s.lstrip("- ") for s in re.split(r"(?<=[.!?])\s+|\n+", text)]
                record["said"] = [
                    s for s in sentences if s and not lead.match(s) and wrong <= set(tokenize(s))
                ]
                record["flagged"] = answer.coverage in ("unstated", "no_paper") or bool(
                    metrics.says_unstated(text)
                )
            else:
                record["answered"] = all(metrics.states(text, f) for f in row["facts"])
            out.append(record)
        print(f"{corpus.name}: {summary([r for r in out if r['corpus'] == corpus.name])}")
    print(f"all: {summary(out)} ({time.perf_counter() - started:.0f} s)")
    suffix = ("" if args.llm == "local" else f"-{args.llm}") + (f"-{args.off}" if args.off else "")
    path = REPO / "bench" / "out" / f"details-{args.split}{suffix}.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
