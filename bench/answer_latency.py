"""How long a researcher waits for a checked answer from the local model.

    .venv/bin/python bench/answer_latency.py --index-dir /tmp/idx [--n 8]

For single-paper questions of ``eval/questions/icml2026.jsonl`` that the model answers (the
numeric facts and follow-ups), asked one at a time on the bundled index with the default
local backend: the time to the first checked statement shown (first visible text) and to
the finished answer, p50 and max. Then, for the same prompts in the same run, llama.cpp's
own time (``create_chat_completion(stream=True)`` on the identical messages): its first
token and its last. Each prompt starts from an empty KV cache on both sides, so neither
gets the other's prompt for free. Also the verifier's own time per answer (``rag.answer.verifier``),
and the local model's judgements (``rag.answer.judge``): of the question (is the paper the one
described, does its abstract state the answer), before the first statement, and of the
statements the word check removed for their wording (does the abstract support it), after the
model has written.
Targets: first visible text p50 <= 6 s, finished answer p50 <= 15 s on an idle machine, the
verifier <= 0.5 s per answer.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time
from pathlib import Path
from typing import Any

from _util import load_average

ROOT = Path(__file__).resolve().parent.parent


def single_paper_questions(n: int) -> list[str]:
    rows = [json.loads(line) for line in (ROOT / "eval/questions/icml2026.jsonl").open()]
    picked = [r["question"] for r in rows if r["id"].startswith("fact-") and not r.get("history")]
    return picked[:n]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--index-dir", type=Path, required=True)
    parser.add_argument("--n", type=int, default=8, help="questions (default 8)")
    args = parser.parse_args(argv)

    from rag import Answer, Assistant
    from rag.evaluation import judge as judges

    assistant = Assistant.open(index_dir=args.index_dir, llm="local")
    generator = assistant.generator("local")
    llm = generator.llm  # type: ignore[attr-defined]
    prompts: list[list[dict[str, str]]] = []
    chat = generator.chat

    def recording(messages: list[dict[str, str]]) -> Any:
        prompts.append(messages)
        return chat(messages)

    generator.chat = recording  # type: ignore[method-assign]
    judging = [0.0, 0.0]  # seconds the model spent judging questions, statements
    reads = type(llm).yes_or_no

    def timed(self: Any, messages: list[dict[str, str]]) -> float:
        started = time.perf_counter()
        try:
            return float(reads(self, messages))
        finally:
            judging[judges.ASK_SUPPORTS in messages[-1]["content"]] += time.perf_counter() - started

    type(llm).yes_or_no = timed
    assistant.ask("What does the CSR paper report?")  # loads the model and the index
    print(f"{assistant.stats().papers} papers; {load_average()}")
    ours: list[tuple[float, float]] = []
    theirs: list[tuple[float, float]] = []
    verifying: list[float] = []  # the verifier's seconds per answer
    judged: list[float] = []  # the model's judgements of the question, seconds per answer
    reread: list[float] = []  # its judgements of removed statements, seconds per answer
    # the verifier's model, whether it reads sentences (the default) or also judges
    judge = assistant.verifier or assistant.reader
    scorer = judge.model if judge else None
    for question in single_paper_questions(args.n):
        llm.llama.reset()
        prompts.clear()
        spent = scorer.seconds if scorer else 0.0
        judged_before, reread_before = judging
        started = time.perf_counter()
        first = None
        final = None
        for event in assistant.stream(question):
            if isinstance(event, str) and first is None:
                first = time.perf_counter() - started
            if isinstance(event, Answer):
                final = event
        done = time.perf_counter() - started
        verifying.append((scorer.seconds - spent) if scorer else 0.0)
        judged.append(judging[0] - judged_before)
        reread.append(judging[1] - reread_before)
        if not prompts or final is None:
            print(f"  (no model call: {question})")
            continue
        ours.append((first or done, done))
        theirs.append(_llama_alone(llm, prompts[-1]))
        print(
            f"  {ours[-1][0]:5.1f}s first, {done:5.1f}s done | llama.cpp {theirs[-1][0]:5.1f}s "
            f"first token, {theirs[-1][1]:5.1f}s done | {final.text[:70]!r}"
        )
    if not ours:
        print("no question reached the model")
        return 1
    for name, rows in (("rag (checked statements)", ours), ("llama.cpp alone", theirs)):
        firsts, dones = [r[0] for r in rows], [r[1] for r in rows]
        print(
            f"{name:26} first text p50 {statistics.median(firsts):5.1f}s max {max(firsts):5.1f}s"
            f" | done p50 {statistics.median(dones):5.1f}s max {max(dones):5.1f}s"
        )
    if scorer:
        print(
            f"verifier: p50 {statistics.median(verifying):.2f}s, max {max(verifying):.2f}s per "
            f"answer ({statistics.median(verifying) / statistics.median(r[1] for r in ours):.0%} "
            "of the finished answer's p50)"
        )
    print(
        f"the model's judgements (checks.judge_premises): p50 {statistics.median(judged):.2f}s, "
        f"max {max(judged):.2f}s per answer, before the first statement"
    )
    print(
        f"  and of removed statements (checks.judge_statements): p50 "
        f"{statistics.median(reread):.2f}s, max {max(reread):.2f}s per answer, after the model "
        f"has written ({sum(1 for r in reread if r)} of {len(reread)} answers read one)"
    )
    ratio = statistics.median(r[1] for r in ours) / statistics.median(r[1] for r in theirs)
    print(f"finished answer, rag / llama.cpp alone: {ratio:.2f}x  ({load_average()})")
    return 0


def _llama_alone(llm: Any, messages: list[dict[str, str]]) -> tuple[float, float]:
    """llama.cpp's own first-token and total time for the same messages and settings."""
    llm.llama.reset()
    started = time.perf_counter()
    first = None
    for piece in llm.llama.create_chat_completion(
        messages=messages, max_tokens=llm.max_tokens, temperature=llm.temperature, stream=True
    ):
        if first is None and piece["choices"][0]["delta"].get("content"):
            first = time.perf_counter() - started
    done = time.perf_counter() - started
    return first or done, done


if __name__ == "__main__":
    sys.exit(main())
