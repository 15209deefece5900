"""Batch evaluation: ask every question of a file, score retrieval and answers, write a report.

    python eval/run.py --questions eval/questions/icml2026.jsonl --llm extractive \\
        --index-dir /tmp/eval-index --ingest rag/data/icml2026_abstracts.txt
    python eval/run.py --corpus dev --llm local     # the dev corpora of eval/corpora.py

Exit codes: 0 all gates pass, 1 a gate failed (each failure is printed), 2 the run could
not be made (a bad question row, a missing index, a bad option).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

if __package__ in (None, ""):  # run as a script: make the repo root importable
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

import rag  # noqa: E402,F401  (the offline switches, before anything imports a model)
from eval import indexes, report, runner  # noqa: E402
from eval.metrics import RETRIEVAL_METRICS  # noqa: E402
from eval.questions import PaperLookup, Question, QuestionFileError, load_questions  # noqa: E402
from rag import Assistant, Paper, RagError  # noqa: E402
from rag.types import BACKENDS  # noqa: E402

# (option, report value, comparison): a gate fails when the comparison does not hold.
GATES = (
    ("min_recall_at_5", ("retrieval", "recall@5"), ">="),
    ("min_mrr", ("retrieval", "mrr"), ">="),
    ("max_false_refusal", ("answers", "false_refusal_rate"), "<="),
    ("min_refusal_accuracy", ("answers", "refusal_accuracy"), ">="),
)


class RunError(Exception):
    """The evaluation cannot be run as asked."""


def main(argv: Sequence[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" in argv:  # `rag eval -- --questions ...` forwards the separator
        argv.remove("--")
    args = build_parser().parse_args(argv)
    if args.corpus:
        return run_corpora(args)
    if args.questions is None:
        print("error: pass --questions FILE or --corpus NAME", file=sys.stderr)
        return 2
    return run_one(args)


def run_one(args: argparse.Namespace) -> int:
    try:
        questions = load_questions(args.questions)
        assistant = open_assistant(args)
        selected = select(questions, args)
        lookup = PaperLookup(assistant.papers())
        relevant = {q.id: lookup.resolve(q, args.questions) for q in selected}
        result = evaluate(assistant, selected, relevant, args)
    except (QuestionFileError, RunError, RagError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    paths = report.write(result, args.out or default_out(args))
    print_summary(result, paths)
    failed = [g for g in result["gates"] if not g["passed"]]
    for g in failed:
        print(f"gate failed: {g['message']}", file=sys.stderr)
    return 1 if failed else 0


def build_parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="eval/run.py", description=__doc__.split("\n")[0])
    p.add_argument("--questions", type=Path, help="question file (JSONL)")
    p.add_argument(
        "--corpus",
        type=_corpora,
        help="evaluation corpora of eval/corpora.py, comma-separated, or dev, test, all: "
        "each is indexed (cached in bench/out/corpus-NAME) and asked its own questions",
    )
    p.add_argument("--index-dir", type=Path, help="index folder (default: the settings')")
    p.add_argument("--chroma-url", help="use a Chroma server, e.g. http://127.0.0.1:8000")
    p.add_argument("--chroma-token", help="auth token for the Chroma server")
    p.add_argument(
        "--ingest",
        type=Path,
        nargs="+",
        default=[],
        metavar="PATH",
        help="ingest these paper lists into the index first (incremental)",
    )
    p.add_argument(
        "--llm",
        choices=BACKENDS,
        default="extractive",
        help="answering backend (default: extractive, no model)",
    )
    p.add_argument("--k", type=int, help="papers retrieved per answer (default: the settings')")
    p.add_argument("--out", type=Path, help="report folder (default: eval/out/<questions stem>)")
    p.add_argument(
        "--retrievers",
        type=_retrievers,
        default=list(runner.RETRIEVERS),
        help="retrievers compared, comma-separated (default: bm25,dense,hybrid)",
    )
    p.add_argument("--limit", type=int, help="ask only the first N questions")
    p.add_argument("--min-recall-at-5", type=float, metavar="X")
    p.add_argument("--min-mrr", type=float, metavar="X")
    p.add_argument("--max-false-refusal", type=float, metavar="X")
    p.add_argument("--min-refusal-accuracy", type=float, metavar="X")
    needle = p.add_argument_group("needle mode: the bundled papers among many distractors")
    needle.add_argument(
        "--needle",
        action="store_true",
        help="index the bundled papers with --distractors (cached in "
        "bench/out/needle-index) and ask the rows not marked needle=false",
    )
    needle.add_argument(
        "--distractors",
        type=Path,
        default=indexes.DISTRACTORS,
        help="distractor paper list (default: ../shared/data/ml_abstracts.jsonl)",
    )
    needle.add_argument(
        "--distractors-limit",
        type=int,
        metavar="N",
        help="only the first N distractors (own cached index, for quick runs)",
    )
    return p  # fmt: skip


def _retrievers(value: str) -> list[str]:
    modes = [m.strip() for m in value.split(",") if m.strip()]
    unknown = [m for m in modes if m not in runner.RETRIEVERS]
    if unknown or not modes:
        known = ", ".join(runner.RETRIEVERS)
        raise argparse.ArgumentTypeError(
            f"unknown retriever {', '.join(unknown) or '(none)'}; use {known}"
        )
    return list(dict.fromkeys(modes))


def _corpora(value: str) -> list[str]:
    from eval.corpora import BY_NAME, CORPORA

    groups = {"all": [c.name for c in CORPORA]}
    for split in ("dev", "test"):
        groups[split] = [c.name for c in CORPORA if c.split == split]
    names = [n for part in value.split(",") for n in groups.get(part.strip(), [part.strip()])]
    unknown = [n for n in names if n not in BY_NAME]
    if unknown or not names:
        raise argparse.ArgumentTypeError(
            f"unknown corpus {', '.join(unknown) or '(none)'}; use dev, test, all or one of "
            + ", ".join(BY_NAME)
        )
    return list(dict.fromkeys(names))


def run_corpora(args: argparse.Namespace) -> int:
    """Each corpus indexed in its own folder and asked its own questions; then one table."""
    from eval.corpora import BY_NAME

    rows, worst = [], 0
    for name in args.corpus:
        corpus = BY_NAME[name]
        one = argparse.Namespace(**vars(args))
        one.questions = corpus.questions
        one.index_dir = indexes.BENCH_OUT / f"corpus-{name}"
        one.ingest = [corpus.path]
        one.out = (
            (args.out / name)
            if args.out
            else indexes.REPO / "eval" / "out" / (f"corpus-{name}-{args.llm}")
        )
        print(f"== {name} ({corpus.split})", file=sys.stderr)
        worst = max(worst, run_one(one))
        report_json = one.out / "report.json"
        if report_json.exists():
            import json

            rows.append((name, corpus.split, json.loads(report_json.read_text())["answers"]))
    print(report.corpus_table(rows, args.llm))
    return worst


def default_out(args: argparse.Namespace) -> Path:
    stem = args.questions.stem
    if args.needle:
        stem += "-needle" if args.distractors_limit is None else f"-needle{args.distractors_limit}"
    return indexes.REPO / "eval" / "out" / stem


def open_assistant(args: argparse.Namespace) -> Assistant:
    """The index to ask: the cached needle index, or --index-dir after any --ingest."""
    if args.needle:
        if args.chroma_url:
            raise RunError("--needle keeps its own index folder; leave out --chroma-url.")
        if not args.distractors.exists():
            raise RunError(f"{args.distractors}: no such distractor list. Pass --distractors.")
        index_dir, sources, prune = indexes.needle_sources(
            args.distractors, args.distractors_limit, args.index_dir
        )
        return indexes.open_index(index_dir, [*sources, *args.ingest], prune=prune, llm=args.llm)
    if args.corpus:
        return indexes.open_index(args.index_dir, args.ingest, prune=True, llm=args.llm)
    assistant = Assistant.open(
        index_dir=args.index_dir,
        chroma_url=args.chroma_url,
        llm=args.llm,
        **{"store.chroma_token": args.chroma_token},
    )
    if args.ingest:
        print(assistant.ingest(args.ingest).summary(), file=sys.stderr)
    return assistant


def select(questions: list[Question], args: argparse.Namespace) -> list[Question]:
    chosen = [q for q in questions if q.needle] if args.needle else questions
    return chosen[: args.limit] if args.limit is not None else chosen


def evaluate(
    assistant: Assistant,
    questions: list[Question],
    relevant: dict[str, list[Paper]],
    args: argparse.Namespace,
) -> dict[str, Any]:
    """Ask every question (with a progress bar on stderr), then score and summarise."""
    from tqdm import tqdm

    started, clock = datetime.now(UTC), time.perf_counter()
    outcomes = [
        runner.ask(assistant, q, relevant[q.id], retrievers=args.retrievers, k=args.k, llm=args.llm)
        for q in tqdm(questions, desc="questions", unit=" q", file=sys.stderr, mininterval=2)
    ]
    runner.score(outcomes, args.retrievers)
    summary = runner.summarise(
        outcomes, args.retrievers, assistant.settings.retrieval.min_similarity
    )
    config = {
        "questions": str(args.questions),
        "index": str(assistant.stats().location),
        "papers": len(assistant.papers()),
        "needle": bool(args.needle),
        "retrievers": args.retrievers,
        "retriever": runner.PRODUCT_RETRIEVER,
        "llm": args.llm,
        "k": args.k or assistant.settings.retrieval.k,
        "commit": _commit(),
        "started": started.isoformat(timespec="seconds"),
        "seconds": time.perf_counter() - clock,
    }
    result = {"config": config, **summary}
    result["gates"] = check_gates(result, args)
    return result


def check_gates(result: dict[str, Any], args: argparse.Namespace) -> list[dict[str, Any]]:
    """Each gate asked for on the command line, with its value and whether it holds."""
    gates = []
    gated = runner.PRODUCT_RETRIEVER
    if gated not in result["retrieval"]:
        gated = next(iter(result["retrieval"]))
    for option, (section, metric), op in GATES:
        limit = getattr(args, option)
        if limit is None:
            continue
        source = result[section][gated] if section == "retrieval" else result[section]
        value = source.get(metric)
        name = f"{metric} ({gated})" if section == "retrieval" else metric
        passed = value is not None and (value >= limit if op == ">=" else value <= limit)
        shown = "not measurable (no such questions)" if value is None else f"{value:.3f}"
        message = f"{name} = {shown}, needs {op} {limit} (--{option.replace('_', '-')})"
        gates.append(
            {"name": name, "value": value, "op": op, "limit": limit, "passed": passed,
             "message": message}
        )  # fmt: skip
    return gates


def print_summary(result: dict[str, Any], paths: list[Path]) -> None:
    for mode, r in result["retrieval"].items():
        values = "  ".join(f"{m} {r.get(m, 0):.3f}" for m in RETRIEVAL_METRICS)
        print(f"{mode:>7}: {values}")
    a = result["answers"]
    print(
        "answers: "
        + "  ".join(
            f"{k} {v:.3f}" if isinstance(v, float) else f"{k} {v}"
            for k, v in a.items()
            if v is not None and not isinstance(v, dict)
        )
    )
    print("passed: " + "  ".join(f"{k} {v}" for k, v in a.get("passed", {}).items()))
    print(f"{len(result['failures'])} questions with problems; report: {paths[1]}")


def _commit() -> str:
    try:
        return subprocess.run(
            ["git", "rev-parse", "--short", "HEAD"],
            cwd=indexes.REPO,
            capture_output=True,
            text=True,
            timeout=5,
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


if __name__ == "__main__":
    sys.exit(main())
