"""The report of a run: report.json, report.md (for a person) and PNG plots, in one folder.

Rendering is pure: ``markdown(report)`` turns the JSON-ready report into text, and the
plots are drawn from the same values, so the three never disagree.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from .metrics import RETRIEVAL_METRICS

PLOTS = {
    "recall": "recall_at_k.png",
    "latency": "latency.png",
    "similarity": "similarity.png",
}
_LABELS = {
    "recall@1": "R@1",
    "recall@5": "R@5",
    "recall@10": "R@10",
    "mrr": "MRR",
    "ndcg@10": "nDCG@10",
}


def write(report: dict[str, Any], out: Path) -> list[Path]:
    """Write report.json, report.md and the plots into ``out``; return the paths written."""
    out.mkdir(parents=True, exist_ok=True)
    paths = [out / "report.json", out / "report.md"]
    paths[0].write_text(json.dumps(report, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    paths[1].write_text(markdown(report), encoding="utf-8")
    paths += plot(report, out)
    return paths


# -- markdown ----------------------------------------------------------------------------------
def markdown(report: dict[str, Any]) -> str:
    sections = [
        _header(report),
        _retrieval_table(report["retrieval"]),
        _answers_table(report),
        _latency_table(report["latency"]),
        _calibration(report["calibration"]),
        _gates(report.get("gates", [])),
        _failures(report["failures"]),
        _questions_table(report),
    ]
    return "\n\n".join(s for s in sections if s) + "\n"


def _header(report: dict[str, Any]) -> str:
    c, n = report["config"], report["counts"]
    lines = [
        f"# Evaluation: {Path(c['questions']).name}",
        "",
        f"- index: `{c['index']}` ({c['papers']} papers){' — needle mode' if c['needle'] else ''}",
        f"- answers: {c['retriever']} retrieval, `{c['llm']}` backend, k={c['k']}",
        f"- questions: {n['questions']} ({n['answerable']} answerable, {n['unanswerable']} "
        f"unanswerable, {n['with_facts']} with facts, {n['follow_ups']} follow-ups)",
        f"- run: {c['started']}, {c['seconds']:.0f} s",
    ]
    return "\n".join(lines)


def _retrieval_table(retrieval: dict[str, Any]) -> str:
    head = ["retriever", *(_LABELS[m] for m in RETRIEVAL_METRICS), "search p50", "search p95"]
    rows = []
    for mode, r in retrieval.items():
        seconds = r["search_seconds"]
        rows.append(
            [
                mode,
                *(_num(r.get(m)) for m in RETRIEVAL_METRICS),
                _ms(seconds["p50"]),
                _ms(seconds["p95"]),
            ]
        )
    first: dict[str, Any] = next(iter(retrieval.values()), {})
    queries = first.get("queries", 0)
    title = f"## Retrieval ({queries} answerable questions, first 10 papers)"
    return f"{title}\n\n{_table(head, rows)}\n\n![recall@k](recall_at_k.png)"


def _answers_table(report: dict[str, Any]) -> str:
    a, c = report["answers"], report["config"]
    rows = [
        ["citation precision (cited papers that are relevant)", _num(a["citation_precision"])],
        ["citation recall (relevant papers that are cited)", _num(a["citation_recall"])],
        ["citations removed (to unretrieved sources)", str(a["removed_citations"])],
        ["refusal accuracy (unanswerable questions refused)", _num(a["refusal_accuracy"])],
        ["false refusals (answerable questions refused)", _num(a["false_refusal_rate"])],
        ["fact recall (facts the answer states)", _num(a["fact_recall"])],
        [
            "statements kept / removed by the check",
            f"{a['statements_kept']} / {a['statements_removed']}",
        ],
        [
            "false premises confirmed",
            f"{a['false_premises_confirmed']} of {a['false_premises']}",
        ],
        [
            "unstated facts answered as if stated",
            f"{a['unstated_answered_as_stated']} of {a['unstated']}",
        ],
        ["asked facts stated", _num(a["asked_facts_stated"])],
        ["numbers in no cited abstract", str(a["invented_numbers"])],
        ["answers repeating the prompt (5-word runs)", str(a["prompt_leaks"])],
        ["answerable questions refused (lists aside)", _num(a.get("answerable_refused"))],
        [
            "answerable questions said unstated (lists aside)",
            _num(a.get("answerable_said_unstated")),
        ],
        [
            'unstated facts answered "no indexed paper" (the paper is indexed)',
            str(a.get("unstated_said_no_paper", "")),
        ],
        [
            "lists: mean recall / precision",
            f"{_num(a.get('list_recall'))} / {_num(a.get('list_precision'))}",
        ],
        *([f"passed: {kind}", value] for kind, value in a.get("passed", {}).items()),
    ]
    title = f"## Answers ({c['retriever']}, `{c['llm']}`)"
    return f"{title}\n\n{_table(['metric', 'value'], rows)}"


def _latency_table(latency: dict[str, Any]) -> str:
    rows = [[stage, _ms(v["p50"]), _ms(v["p95"]), str(v["n"])] for stage, v in latency.items()]
    table = _table(["stage", "p50", "p95", "n"], rows)
    return f"## Latency per stage\n\n{table}\n\n![latency](latency.png)"


def _calibration(cal: dict[str, Any]) -> str:
    threshold = cal["min_similarity"]
    parts = [
        "## Refusal threshold\n\n"
        "Best similarity of the question to a retrieved paper. `sentence`: the answering "
        "step's relevance (closest abstract sentence; 1.0 when the question names the paper). "
        "`chunk`: `Hit.dense_similarity` of the best chunk."
    ]
    rows = []
    for signal, c in cal["signals"].items():
        for group in ("answerable", "unanswerable"):
            s = c[group]
            cells = [_num(s.get(k)) for k in ("min", "p5", "p50", "p95", "max")]
            rows.append([signal, group, str(s["n"]), *cells])
    parts.append(_table(["signal", "questions", "n", "min", "p5", "p50", "p95", "max"], rows))
    for signal, c in cal["signals"].items():
        gap = c["separating_range"]
        verdict = (
            f"any threshold in ({gap[0]:.3f}, {gap[1]:.3f}] separates them"
            if gap
            else "no threshold separates them"
        )
        parts.append(
            f"- `{signal}` at the threshold now ({threshold}): "
            f"{c['answerable_below_threshold']} answerable below it, "
            f"{c['unanswerable_at_or_above_threshold']} unanswerable at or above it; {verdict}."
        )
    parts.append("![similarity](similarity.png)")
    return "\n\n".join(parts)


def _gates(gates: list[dict[str, Any]]) -> str:
    if not gates:
        return ""
    rows = [
        [g["name"], _num(g["value"]), f"{g['op']} {g['limit']}", "pass" if g["passed"] else "FAIL"]
        for g in gates
    ]
    return "## Gates\n\n" + _table(["gate", "value", "limit", "result"], rows)


def _failures(failures: list[dict[str, Any]]) -> str:
    if not failures:
        return "## Failures\n\nNone."
    lines = [f"## Failures ({len(failures)} questions)", ""]
    for f in failures:
        lines.append(f"- **{f['id']}** (line {f['line']}) {f['question']}")
        lines.extend(f"  - {p}" for p in f["problems"])
    return "\n".join(lines)


def _questions_table(report: dict[str, Any]) -> str:
    modes = list(report["retrieval"])
    head = ["id", *(f"{m} rank" for m in modes), "refused", "sim sentence", "sim chunk"]
    head += ["cit P", "cit R", "facts"]
    rows = []
    for q in report["questions"]:
        ranks = [_rank(q["first_relevant_rank"].get(m), q["answerable"]) for m in modes]
        facts = f"{sum(q['facts'].values())}/{len(q['facts'])}" if q["facts"] else ""
        refused = ("yes" if q["refused"] else "no") + ("" if q["answerable"] else " (n/a)")
        rows.append(
            [
                q["id"],
                *ranks,
                refused,
                _num(q["similarity"].get("sentence")),
                _num(q["similarity"].get("chunk")),
                _num(q["citation_precision"]),
                _num(q["citation_recall"]),
                facts,
            ]
        )
    note = "rank: of the first relevant paper; (n/a): an out-of-corpus question"
    return f"## All questions\n\n{note}\n\n{_table(head, rows)}"


def _rank(rank: int | None, answerable: bool) -> str:
    if not answerable:
        return ""
    return str(rank) if rank is not None else ">10"


def _table(head: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    lines = ["| " + " | ".join(head) + " |", "|" + "|".join(" --- " for _ in head) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


def _num(value: float | None) -> str:
    return "–" if value is None else f"{value:.3f}"


def _ms(seconds: float | None) -> str:
    return "–" if seconds is None else f"{seconds * 1000:.0f} ms"


# -- plots -------------------------------------------------------------------------------------
def plot(report: dict[str, Any], out: Path) -> list[Path]:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    paths = []
    for name, draw in (
        ("recall", _plot_recall),
        ("latency", _plot_latency),
        ("similarity", _plot_similarity),
    ):
        fig, ax = plt.subplots(figsize=(6.4, 4.2))
        draw(ax, report)
        fig.tight_layout()
        path = out / PLOTS[name]
        fig.savefig(path, dpi=110)
        plt.close(fig)
        paths.append(path)
    return paths


def _plot_recall(ax: Any, report: dict[str, Any]) -> None:
    ks = [1, 5, 10]
    for mode, r in report["retrieval"].items():
        values = [r.get(f"recall@{k}") or 0.0 for k in ks]
        ax.plot(ks, values, marker="o", label=mode)
    ax.set(xlabel="k (papers)", ylabel="recall@k", ylim=(0, 1.02), xticks=ks)
    ax.set_title("Recall@k per retriever")
    ax.grid(alpha=0.3)
    ax.legend()


def _plot_latency(ax: Any, report: dict[str, Any]) -> None:
    series: dict[str, list[float]] = {}
    for q in report["questions"]:
        for stage, seconds in q["timings"].items():
            series.setdefault(f"answer: {stage}", []).append(seconds * 1000)
        for mode, seconds in q["search_seconds"].items():
            series.setdefault(f"search: {mode}", []).append(seconds * 1000)
    names = sorted(series)
    if names:
        ax.boxplot([series[n] for n in names], orientation="horizontal", tick_labels=names)
    ax.set(xlabel="milliseconds")
    ax.set_title("Latency per stage")
    ax.grid(alpha=0.3, axis="x")


def _plot_similarity(ax: Any, report: dict[str, Any]) -> None:
    signals = list(report["calibration"]["signals"])
    rows = [(signal, group) for signal in signals for group in ("answerable", "unanswerable")]
    for row, (signal, group) in enumerate(rows):
        values = [
            q["similarity"][signal]
            for q in report["questions"]
            if q["similarity"].get(signal) is not None
            and q["answerable"] == (group == "answerable")
        ]
        color = "tab:blue" if group == "answerable" else "tab:orange"
        ax.scatter(values, [row] * len(values), alpha=0.6, color=color)
    ax.axvline(report["calibration"]["min_similarity"], color="red", ls="--", label="threshold")
    ax.set(xlabel="best similarity of a retrieved paper", ylim=(-0.5, len(rows) - 0.5))
    ax.set_yticks(range(len(rows)), [f"{s}: {g}" for s, g in rows])
    ax.set_title("Refusal threshold calibration")
    ax.legend(loc="lower right", fontsize="small")


# -- several corpora side by side ----------------------------------------------------------------
CORPUS_COLUMNS = (
    ("passed", "passed_all"),
    ("false premises confirmed", "false_premises_confirmed"),
    ("unstated as stated", "unstated_answered_as_stated"),
    ("invented numbers", "invented_numbers"),
    ("asked facts", "asked_facts_stated"),
    ("comparisons", ("passed_share", "comparison")),
    ("answerable refused", "answerable_refused"),
    ("answerable said unstated", "answerable_said_unstated"),
    ("unstated said no paper", "unstated_said_no_paper"),
    ("list R / P", ("list_recall", "list_precision")),
    ("follow-ups", ("passed_share", "followup")),
)


def corpus_table(rows: list[tuple[str, str, dict[str, Any]]], llm: str) -> str:
    """One markdown row per corpus (name, split, the answers' headline figures)."""
    head = ["corpus", "split", *(label for label, _ in CORPUS_COLUMNS)]
    body = [[name, split, *(_cell(a, key) for _, key in CORPUS_COLUMNS)] for name, split, a in rows]
    return f"Backend `{llm}`\n\n{_table(head, body)}"


def _cell(a: dict[str, Any], key: Any) -> str:
    if isinstance(key, str):
        value = a.get(key)
        return _num(value) if isinstance(value, float) else str(value)
    first, second = key
    if first == "passed_share":
        return _num(a.get("passed_share", {}).get(second))
    return f"{_num(a.get(first))} / {_num(a.get(second))}"
