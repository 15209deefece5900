"""What each word list and threshold of the answer checks changes: each turned off in turn.

    python bench/rules.py                       # every rule of rag/answer/rules.py
    python bench/rules.py --rules ASKING,GENERIC --sets dev
    python bench/rules.py --out bench/out/rules  # where each run's reports go

Each rule (``rag.answer.rules.RULES``) is set to its ``off`` value before the checks are
imported, and the extractive backend answers the dev corpora (``eval/run.py --corpus dev``)
and the bundled faithfulness set, each in a fresh process; every question's pass or fail is
compared with a run with no rule off. Printed per rule: questions passed per set, and the
questions that changed (+ now passes, - now fails). A rule that changes nothing has no
measurement behind it. The test corpora are never run here.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
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


def run_one(rule: str, args: list[str]) -> None:
    """In this process: turn ``rule`` off (``none``: nothing), then run eval/run.py."""
    rules = load_rules()
    if rule != "none":
        setattr(rules, rule, rules.RULES[rule].off)
    sys.path.insert(0, str(REPO))
    sys.argv = [str(REPO / "eval" / "run.py"), *args]
    runpy.run_path(str(REPO / "eval" / "run.py"), run_name="__main__")


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
        done = subprocess.run(
            [sys.executable, __file__, "--run", rule, "--", *args],
            capture_output=True,
            text=True,
        )
        if done.returncode != 0:
            raise SystemExit(f"{rule} on {name} failed:\n{done.stderr[-2000:]}")
        result[name] = outcomes(folder)
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rules", help="comma-separated rule names (default: all)")
    parser.add_argument("--sets", default="dev,bundled", help="dev, bundled or both")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "out" / "rules")
    parser.add_argument("--run", help=argparse.SUPPRESS)
    argv = sys.argv[1:] if argv is None else argv
    if "--run" in argv:
        at = argv.index("--run")
        run_one(argv[at + 1], argv[argv.index("--") + 1 :])
        return 0
    args = parser.parse_args(argv)
    names = args.rules.split(",") if args.rules else list(load_rules().RULES)
    sets = args.sets.split(",")
    index_dir = args.out / "bundled-index"
    started = time.perf_counter()
    base = measure("none", sets, args.out, index_dir)
    print("rule | " + " | ".join(f"{s} passed" for s in sets) + " | changed")
    print("none | " + " | ".join(f"{sum(base[s].values())}/{len(base[s])}" for s in sets) + " |")
    for i, name in enumerate(names, 1):
        got = measure(name, sets, args.out, index_dir)
        changed = [
            f"{'+' if got[s][q] else '-'}{q}"
            for s in sets
            for q in base[s]
            if got[s][q] != base[s][q]
        ]
        counts = " | ".join(f"{sum(got[s].values())}/{len(got[s])}" for s in sets)
        print(f"{name} | {counts} | {' '.join(changed) or 'nothing'}", flush=True)
        elapsed = time.perf_counter() - started
        print(f"  [{i}/{len(names)} rules, {elapsed / 60:.0f} min]", file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
