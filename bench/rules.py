"""What each word list and threshold of the answer checks changes: each turned off in turn.

    python bench/rules.py                       # every rule of rag/answer/rules.py
    python bench/rules.py --rules ASKING,GENERIC --sets dev
    python bench/rules.py --out bench/out/rules  # where each run's reports go
    python bench/rules.py --sets none --labelled   # labelled statements and lists only

Each rule (``rag.answer.rules.RULES``) is set to its ``off`` value before the checks are
imported, and the extractive backend answers the dev corpora (``eval/run.py --corpus dev``)
and the bundled faithfulness set, each in a fresh process; every question's pass or fail is
compared with a run with no rule off. Printed per rule: questions passed per set, and the
questions that changed (+ now passes, - now fails). With ``--labelled``, also what the
extractive answers, quoting the abstracts, do not exercise: the word check's precision and
recall on the labelled statements (the bundled papers' and the dev corpora's) and the
lists' on the 13 list questions over the bundled papers. A rule
that changes nothing has no measurement behind it. The test corpora are never run here.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import re
import runpy
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
RULES_FILE = REPO / "rag" / "answer" / "rules.py"
SETS = {
    "dev": ["--corpus", "dev"],
    "bundled": [
        "--questions", str(REPO / "eval" / "questions" / "faithfulness.jsonl"),
        "--ingest", str(REPO / "rag" / "data" / "icml2026_abstracts.txt"),
    ],
}  # fmt: skip


def load_rules():
    """``rag.answer.rules`` loaded on its own (it imports nothing of the package), so one of
    its entries can be changed before the checks import it."""
    spec = importlib.util.spec_from_file_location("rag.answer.rules", RULES_FILE)
    module = importlib.util.module_from_spec(spec)
    sys.modules["rag.answer.rules"] = module
    spec.loader.exec_module(module)
    return module


def run_one(rule: str, script: str, args: list[str]) -> None:
    """In this process: turn ``rule`` off (``none``: nothing), then run ``script``."""
    rules = load_rules()
    if rule != "none":
        setattr(rules, rule, rules.RULES[rule].off)
    sys.path.insert(0, str(REPO))
    sys.argv = [str(REPO / script), *args]
    runpy.run_path(str(REPO / script), run_name="__main__")


# what the extractive answers do not exercise: the word check's precision and recall on the
# labelled statements, the bundled papers' (eval/check_statements.py) and the dev corpora's
# (bench/calibrate_verifier.py), and the lists' precision and recall on the 13 list
# questions over the bundled papers (bench/lists.py --bundled-only)
LABELLED = (
    ("bundled statements", "eval/check_statements.py", (),
     re.compile(r"precision ([\d.]+), recall ([\d.]+)")),
    ("dev statements", "bench/calibrate_verifier.py", (),
     re.compile(r"word-level check alone \(before\)\s+precision ([\d.]+)\s+recall ([\d.]+)")),
    ("bundled lists", "bench/lists.py", ("--bundled-only", "--out", "{out}/lists.json"),
     re.compile(r"find_all\s+([\d.]+)\s+([\d.]+)")),
)  # fmt: skip


def _child(rule: str, script: str, args: list[str]) -> str:
    done = subprocess.run(
        [sys.executable, __file__, "--run", rule, script, "--", *args],
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        raise SystemExit(f"{rule}: {script} failed:\n{done.stderr[-2000:]}")
    return done.stdout


def labelled(rule: str, out: Path) -> dict[str, str]:
    """labelled set -> "P x R y" with ``rule`` off."""
    found = {}
    for name, script, args, pattern in LABELLED:
        folder = out / rule
        folder.mkdir(parents=True, exist_ok=True)
        said = _child(rule, script, [a.format(out=folder) for a in args])
        match = pattern.search(said)
        found[name] = f"P {match[1]} R {match[2]}" if match else "?"
    return found


def outcomes(out: Path) -> dict[str, bool]:
    """question (report folder / id) -> passed, over every report under ``out``."""
    found = {}
    for report in sorted(out.rglob("report.json")):
        where = report.parent.name
        for q in json.loads(report.read_text(encoding="utf-8"))["questions"]:
            found[f"{where}/{q.get('id') or q['line']}"] = bool(q["passed"])
    return found


def measure(rule: str, sets: list[str], out: Path, index_dir: Path) -> dict[str, dict[str, bool]]:
    result = {}
    for name in sets:
        folder = out / rule / name
        args = [*SETS[name], "--llm", "extractive", "--retrievers", "hybrid", "--out", str(folder)]
        if name == "bundled":
            args += ["--index-dir", str(index_dir)]
        _child(rule, "eval/run.py", args)
        result[name] = outcomes(folder)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", help="comma-separated rule names (default: all)")
    parser.add_argument("--sets", default="dev,bundled", help=f"of {', '.join(SETS)}")
    parser.add_argument(
        "--labelled", action="store_true", help="also the labelled statements and bundled lists"
    )
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "rules")
    parser.add_argument("--run", help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else argv
    if "--run" in argv:
        at = argv.index("--run")
        run_one(argv[at + 1], argv[at + 2], argv[argv.index("--") + 1 :])
        return 0
    args = parser.parse_args(argv)
    names = args.rules.split(",") if args.rules else list(load_rules().RULES)
    sets = [s for s in args.sets.split(",") if s in SETS]
    index_dir = args.out / "bundled-index"
    started = time.perf_counter()
    base = measure("none", sets, args.out, index_dir)
    base_said = labelled("none", args.out) if args.labelled else {}
    said_heads = list(base_said)
    print("rule | " + " | ".join([*(f"{s} passed" for s in sets), *said_heads]) + " | changed")
    counts = [f"{sum(base[s].values())}/{len(base[s])}" for s in sets]
    print("none | " + " | ".join([*counts, *base_said.values()]) + " |")
    for i, name in enumerate(names, 1):
        got = measure(name, sets, args.out, index_dir)
        changed = [
            f"{'+' if got[s][q] else '-'}{q}"
            for s in sets
            for q in base[s]
            if got[s][q] != base[s][q]
        ]
        said = labelled(name, args.out) if args.labelled else {}
        changed += [n for n in said if said[n] != base_said[n]]
        counts = [f"{sum(got[s].values())}/{len(got[s])}" for s in sets] + list(said.values())
        print(f"{name} | {' | '.join(counts)} | {' '.join(changed) or 'nothing'}", flush=True)
        elapsed = time.perf_counter() - started
        print(f"  [{i}/{len(names)} rules, {elapsed / 60:.0f} min]", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
