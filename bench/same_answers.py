"""Every answer of the evaluation sets, written down, to show a change of code left them as
they were (byte for byte): extractive, and a scripted model that writes from the prompt.

    python bench/same_answers.py --out /tmp/before.jsonl        # before the change
    python bench/same_answers.py --out /tmp/after.jsonl         # after it
    python bench/same_answers.py --compare /tmp/before.jsonl /tmp/after.jsonl

The scripted model's reply is made from the prompt alone (each quoted abstract's first
sentence, cited, and a sentence with a number no abstract holds), so the paths a real
model's text takes (the statement check, its fallbacks, the comparison's own words) run
as they do with the local model, in seconds instead of hours.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

if __package__ in (None, ""):
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from eval import indexes  # noqa: E402
from eval.corpora import BY_NAME  # noqa: E402
from eval.questions import load_questions  # noqa: E402
from rag import Answer, Assistant  # noqa: E402
from rag.testing import ScriptedGenerator  # noqa: E402

SETS = {  # question file -> the paper list its index holds
    "iclr2018": BY_NAME["iclr2018"].path,
    "colt2022": BY_NAME["colt2022"].path,
    "aistats2016": BY_NAME["aistats2016"].path,
    "icml2026": indexes.BUNDLED,
    "faithfulness": indexes.BUNDLED,
}
QUESTIONS = indexes.REPO / "eval" / "questions"


def scripted_reply(prompt: str) -> str:
    """What the scripted model writes: each quoted abstract's first sentence with its
    number, and one claim with a number that no abstract holds."""
    lines = []
    for number, body in re.findall(r"\[(\d+)\][^\n]*\n(?:[^\n]*\n)?([^\n]+)", prompt)[:3]:
        first = re.split(r"(?<=[.!?])\s+", body.strip(), maxsplit=1)[0]
        lines.append(f"{first} [{number}]")
    lines.append("It improves accuracy by 93.7% [1].")
    return " ".join(lines)


def record(name: str, qid: str, backend: str, answer: Answer) -> dict[str, Any]:
    return {
        "set": name,
        "id": qid,
        "backend": backend,
        "text": answer.text,
        "coverage": answer.coverage,
        "citations": [[c.number, c.paper.paper_id, c.quote] for c in answer.citations],
        "removed": [str(r) for r in answer.removed],
        "backend_stamp": answer.backend,
    }


def write(out: Path) -> None:
    rows = []
    for name, papers in SETS.items():
        index_dir = indexes.BENCH_OUT / f"same-answers-{name}"
        assistant = indexes.open_index(index_dir, [papers], prune=True)
        scripted = {"local": ScriptedGenerator(scripted_reply)}
        model = Assistant(
            assistant.settings, assistant.store, assistant.embedder, generators=scripted
        )
        for q in load_questions(QUESTIONS / f"{name}.jsonl"):
            for backend, who in (("extractive", assistant), ("local", model)):
                history: list[Answer] = []
                for earlier in q.history:
                    history.append(who.ask(earlier, list(history), llm=backend))
                answer = who.ask(q.question, history, llm=backend, **q.filters)
                rows.append(record(name, q.id, backend, answer))
        print(f"{name}: {len(rows)} answers so far", file=sys.stderr)
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    print(f"{len(rows)} answers -> {out}")


def compare(before: Path, after: Path) -> int:
    old = [json.loads(line) for line in before.read_text().splitlines()]
    new = [json.loads(line) for line in after.read_text().splitlines()]
    differ = [(a, b) for a, b in zip(old, new, strict=False) if a != b]
    for a, b in differ[:10]:
        print(f"{a['set']} {a['id']} {a['backend']}:")
        print(f"  before: {a['text']!r}\n  after:  {b['text']!r}")
    print(f"{len(old)} answers before, {len(new)} after; {len(differ)} differ")
    return 1 if differ or len(old) != len(new) else 0


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--out", type=Path)
    p.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = p.parse_args()
    if args.compare:
        return compare(*args.compare)
    write(args.out or Path("/tmp/answers.jsonl"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
