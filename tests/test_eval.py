"""The evaluation: metric values checked by hand, question files, and the runner end to end."""

from __future__ import annotations

import json
import math
from dataclasses import replace
from pathlib import Path

import pytest

from eval import indexes, verify_questions
from eval.corpora import CORPORA
from eval.metrics import (
    citation_precision,
    citation_recall,
    fact_recall,
    mean_metrics,
    ranking_metrics,
    states,
)
from eval.questions import Contains, PaperLookup, QuestionFileError, load_questions
from eval.run import main
from rag.types import Paper

QUESTIONS = Path(__file__).parent.parent / "eval" / "questions" / "icml2026.jsonl"
NAMES = [c.name for c in CORPORA]


# -- metrics -----------------------------------------------------------------------------------


def test_ranking_metrics_match_hand_computed_values() -> None:
    relevant = {"q1": ["a", "b"], "q2": ["c"], "q3": ["d"]}
    ranked = {"q1": ["x", "a", "y", "b"], "q2": ["c", "z"], "q3": []}
    scores = ranking_metrics(relevant, ranked)
    assert scores["q1"]["recall@1"] == 0.0
    assert scores["q1"]["recall@5"] == 1.0
    assert scores["q1"]["mrr"] == 0.5
    # hits at ranks 2 and 4; the ideal ranking has them at 1 and 2
    ideal = 1 + 1 / math.log2(3)
    assert scores["q1"]["ndcg@10"] == pytest.approx((1 / math.log2(3) + 1 / math.log2(5)) / ideal)
    assert scores["q2"] == {"recall@1": 1.0, "recall@5": 1.0, "recall@10": 1.0, "mrr": 1.0,
                            "ndcg@10": 1.0}  # fmt: skip
    assert scores["q3"]["recall@10"] == 0.0 and scores["q3"]["mrr"] == 0.0
    assert mean_metrics(scores)["mrr"] == pytest.approx(0.5)


def test_ranking_keeps_the_given_order_and_ignores_queries_without_relevant_papers() -> None:
    scores = ranking_metrics({"q": ["b"], "none": []}, {"q": ["a", "b", "a"], "none": ["a"]})
    assert list(scores) == ["q"]
    assert scores["q"]["mrr"] == 0.5 and scores["q"]["recall@1"] == 0.0


def test_each_query_gets_its_own_scores_whatever_the_order_of_ids() -> None:
    relevant = {"q10": ["a"], "q2": ["b"], "q1": ["c"]}
    ranked = {"q1": ["x", "y", "c"], "q10": ["a"], "q2": ["x", "b"]}
    scores = ranking_metrics(relevant, ranked, ["mrr"])
    assert scores == {"q10": {"mrr": 1.0}, "q2": {"mrr": 0.5}, "q1": {"mrr": pytest.approx(1 / 3)}}


def test_citation_precision_and_recall() -> None:
    assert citation_precision(["a", "x", "y"], ["a", "b"]) == pytest.approx(1 / 3)
    assert citation_recall(["a", "x", "y"], ["a", "b"]) == 0.5
    assert citation_precision([], ["a"]) is None
    assert citation_recall(["a"], []) is None


def test_facts_match_numbers_however_they_are_written() -> None:
    assert states(r"RLER improves by 6.2\% over the best RLIR baseline", "6.2%")
    assert states("an improvement of 6.2 % overall", "6.2%")
    assert states("a gain of 6.2 percent", "6.2 %")
    assert not states("a gain of 16.2%", "6.2%")
    assert not states("a gain of 6.25%", "6.2%")
    assert states("pretrained on ≈ 28k hours", "28K hours")
    assert states("bounded by $O( \\log T )$", "log T")
    assert states("over 28,000 hours", "28000 hours")
    assert fact_recall(["6.2%", "3.6%"], "by 6.2% and within 3.6\\% of RLVR") == 1.0
    assert fact_recall(["6.2%", "3.6%"], "by 6.2%") == 0.5
    assert fact_recall([], "anything") is None


# -- question files --------------------------------------------------------------------------
def _write(tmp_path: Path, *rows: object) -> Path:
    path = tmp_path / "questions.jsonl"
    lines = [r if isinstance(r, str) else json.dumps(r) for r in rows]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def test_question_rows_are_parsed_with_their_references(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        {"id": "a", "question": "Which paper?", "relevant": ["contains:DensityFlow", "p-1"]},
        "",
        {"id": "b", "question": "Sourdough?", "answerable": False},
    )
    first, second = load_questions(path)
    assert first.relevant == [Contains(contains="DensityFlow"), "p-1"]
    assert (first.line, second.line) == (1, 3)
    assert not second.answerable and second.relevant == []


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ('{"id": "b", "question": "Q?", "relevant": ["x"], "colour": 1}', "colour"),
        ('{"id": "b", "question": "Q?"}', "needs at least one relevant paper"),
        ('{"id": "b", "question": "Q?", "answerable": false, "facts": ["1"]}', "unanswerable"),
        ('{"id": "a", "question": "Q?", "relevant": ["x"]}', "already used on line 1"),
        ('{"id": "b", "question": "Q?", "relevant": ["x"]', "malformed JSON"),
    ],
)
def test_a_bad_row_names_its_line(tmp_path: Path, row: str, message: str) -> None:
    path = _write(tmp_path, {"id": "a", "question": "Q?", "relevant": ["x"]}, row)
    with pytest.raises(QuestionFileError, match=message) as caught:
        load_questions(path)
    assert str(caught.value).startswith(f"{path}:2: ")


def test_references_resolve_to_exactly_one_paper(tmp_path: Path) -> None:
    papers = [
        Paper("p1", "DensityFlow", "Counterfactuals on the data manifold."),
        Paper("p2", "Other", "A flow model for the data manifold."),
    ]
    lookup = PaperLookup(papers)
    path = _write(
        tmp_path,
        {"id": "ok", "question": "Q?", "relevant": ["contains:densityflow", "p2"]},
        {"id": "many", "question": "Q?", "relevant": ["contains:data manifold"]},
        {"id": "none", "question": "Q?", "relevant": ["contains:sourdough"]},
    )
    ok, many, none = load_questions(path)
    assert [p.paper_id for p in lookup.resolve(ok, path)] == ["p1", "p2"]
    with pytest.raises(QuestionFileError, match=r":2: 2 papers contain"):
        lookup.resolve(many, path)
    with pytest.raises(QuestionFileError, match=r":3: no indexed paper contains"):
        lookup.resolve(none, path)


def test_the_bundled_question_file_is_valid_and_covers_every_kind() -> None:
    questions = load_questions(QUESTIONS)
    assert len(questions) >= 40
    assert sum(not q.answerable for q in questions) >= 5
    assert sum(len(q.relevant) > 1 for q in questions) >= 5
    assert sum(bool(q.history) for q in questions) >= 3
    assert sum(bool(q.facts) for q in questions) >= 10


@pytest.mark.parametrize("name", NAMES)
def test_the_written_questions_and_statements_quote_their_abstracts(name: str) -> None:
    """eval/questions/ and eval/statements/: every kind planned, each gold fact copied from
    the abstract of a paper the row names, each statement about a paper of the corpus."""
    assert verify_questions.check_questions(name) == 0
    assert verify_questions.check_statements(name) == 0


@pytest.mark.parametrize("name", NAMES)
def test_the_written_find_questions_name_papers_of_their_corpus(name: str) -> None:
    """eval/premises/: 12 questions one abstract states, 12 near misses, each from its own
    paper of the corpus (``bench/premise_judge.py --find``)."""
    assert verify_questions.check_premises(name) == 0


@pytest.mark.parametrize("name", NAMES)
def test_the_wrong_detail_questions_quote_their_abstracts(name: str) -> None:
    """eval/details/: 12 questions presuming a detail their paper's abstract contradicts,
    8 controls it answers, facts copied from it (``bench/details.py``)."""
    assert verify_questions.check_details(name) == 0


@pytest.mark.parametrize("name", NAMES)
def test_the_described_questions_quote_their_abstracts(name: str) -> None:
    """eval/described/: 10 questions describing one paper and asking a detail its abstract
    does not give, 6 controls it answers, facts copied from it (``bench/premise_judge.py
    --described``)."""
    assert verify_questions.check_described(name) == 0


def test_the_bundled_question_file_names_papers_of_the_bundled_list(bundled) -> None:
    lookup = PaperLookup(bundled.papers())
    resolved = {p.paper_id for q in load_questions(QUESTIONS) for p in lookup.resolve(q, "f")}
    assert len(resolved) == 19  # every bundled paper is asked about


# -- the runner ------------------------------------------------------------------------------
SMALL = [
    {"id": "trap", "question": "Which paper protects model weights against unauthorized merging?",
     "relevant": ["contains:governance gap"]},
    {"id": "sourdough", "question": "What is the best recipe for sourdough bread?",
     "answerable": False},
    {"id": "rler", "question": "How much does it improve over the best RLIR baseline?",
     "relevant": ["contains:ensembled rewards"], "facts": ["6.2%"],
     "history": ["Which paper proposes RLER?"]},
    {"id": "merging", "question": "ICML 2026 papers on model merging",
     "relevant": ["contains:governance gap", "contains:ICL preservation"]},
]  # fmt: skip


def test_the_runner_writes_a_report_of_every_retriever(
    tmp_path: Path, bundled_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    code = main(
        ["--questions", str(_write(tmp_path, *SMALL)), "--index-dir", str(bundled_index),
         "--llm", "extractive", "--out", str(out)]
    )  # fmt: skip
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert set(report["retrieval"]) == {"bm25", "dense", "hybrid"}
    for mode in report["retrieval"].values():
        assert 0.0 <= mode["mrr"] <= 1.0 and mode["queries"] == 3
    rows = {q["id"]: q for q in report["questions"]}
    assert rows["rler"]["query"] != SMALL[2]["question"]  # the follow-up was rewritten
    assert rows["trap"]["first_relevant_rank"]["hybrid"] is not None
    assert rows["sourdough"]["answerable"] is False
    assert report["counts"] == {"questions": 4, "answerable": 3, "unanswerable": 1,
                                "with_facts": 1, "follow_ups": 1}  # fmt: skip
    assert report["answers"]["refusal_accuracy"] in (0.0, 1.0)
    text = (out / "report.md").read_text()
    assert all(f"| {mode} |" in text for mode in ("bm25", "dense", "hybrid"))
    assert "## Answers" in text and "## Refusal threshold" in text
    for png in ("recall_at_k.png", "latency.png", "similarity.png"):
        assert (out / png).read_bytes().startswith(b"\x89PNG")
    assert "report:" in capsys.readouterr().out


def test_a_failing_gate_exits_1_and_names_the_gate(
    tmp_path: Path, bundled_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(
        ["--questions", str(_write(tmp_path, SMALL[0])), "--index-dir", str(bundled_index),
         "--retrievers", "bm25", "--out", str(tmp_path / "out"), "--min-mrr", "1.5"]
    )  # fmt: skip
    assert code == 1
    assert "gate failed: mrr (bm25)" in capsys.readouterr().err
    gates = json.loads((tmp_path / "out" / "report.json").read_text())["gates"]
    assert gates[0]["passed"] is False


def test_a_bad_row_exits_2_with_its_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, SMALL[0], {"id": "x", "question": "Q?", "relevant": "not a list"})
    assert main(["--questions", str(path), "--out", str(tmp_path / "out")]) == 2
    assert f"{path}:2: relevant" in capsys.readouterr().err
    assert not (tmp_path / "out").exists()


def test_a_reference_to_no_indexed_paper_exits_2(
    tmp_path: Path, bundled_index: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    path = _write(tmp_path, {"id": "x", "question": "Q?", "relevant": ["contains:sourdough"]})
    assert main(["--questions", str(path), "--index-dir", str(bundled_index)]) == 2
    assert f"{path}:1: no indexed paper contains 'sourdough'" in capsys.readouterr().err


def test_needle_mode_never_indexes_a_tldr_and_reuses_its_index(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    distractors = tmp_path / "ml.jsonl"
    rows = [
        {"id": f"d{i}", "venue": "NeurIPS", "year": 2018, "title": f"Bandits {i}",
         "abstract": f"We study bandit algorithm number {i} with regret bounds.",
         "tldr": "SECRET TLDR", "keywords": ["bandits"]}
        for i in range(3)
    ]  # fmt: skip
    distractors.write_text("".join(json.dumps(r) + "\n" for r in rows))
    index_dir = tmp_path / "needle"
    args = ["--questions", str(_write(tmp_path, SMALL[0], SMALL[3])), "--needle",
            "--distractors", str(distractors), "--index-dir", str(index_dir),
            "--retrievers", "hybrid", "--out", str(tmp_path / "out")]  # fmt: skip
    assert main(args) == 0
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["config"]["needle"] and report["config"]["papers"] == 22
    needle = indexes.open_index(index_dir, [indexes.BUNDLED, distractors])
    assert not any("SECRET" in p.abstract or "SECRET" in p.title for p in needle.papers())
    assert needle.search("SECRET TLDR", mode="bm25") == []  # never indexed, so never found
    capsys.readouterr()
    assert main(args) == 0  # the second run reuses the index without reading a record
    assert "indexing" not in capsys.readouterr().err


def test_an_index_is_reingested_only_when_its_sources_change(tmp_path: Path) -> None:
    papers = tmp_path / "papers.jsonl"
    indexes.write_papers(papers, [{"id": "a", "title": "A", "abstract": "Bandits with regret."}])
    first = indexes.open_index(tmp_path / "index", [papers], prune=True)
    version = first.store.version()
    assert indexes.open_index(tmp_path / "index", [papers], prune=True).store.version() == version
    indexes.write_papers(papers, [{"id": "b", "title": "B", "abstract": "Kernels for graphs."}])
    again = indexes.open_index(tmp_path / "index", [papers], prune=True)
    assert [p.paper_id for p in again.papers()] == ["b"]


def test_the_runner_asks_an_index_on_a_chroma_server(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from .chroma_server import ChromaServer
    from .conftest import BUNDLED

    out = tmp_path / "out"
    with ChromaServer(tmp_path / "chroma") as server:
        code = main(
            ["--questions", str(_write(tmp_path, SMALL[0])), "--chroma-url", server.url,
             "--ingest", str(BUNDLED), "--retrievers", "bm25,hybrid", "--out", str(out)]
        )  # fmt: skip
    assert code == 0
    report = json.loads((out / "report.json").read_text())
    assert report["config"]["index"] == server.url
    assert report["questions"][0]["first_relevant_rank"] == {"bm25": 1, "hybrid": 1}
    code = main(["--questions", str(_write(tmp_path, SMALL[0])), "--needle",
                 "--chroma-url", "http://127.0.0.1:9"])  # fmt: skip
    assert code == 2
    assert "--needle keeps its own index folder" in capsys.readouterr().err


def test_a_lists_own_count_is_checked_against_its_citations_not_the_abstracts(bundled) -> None:
    from eval.questions import Question
    from eval.runner import Outcome, invented_numbers

    answer = bundled.ask("Which papers are about model merging?", llm="extractive")
    assert answer.text.startswith(f"{len(answer.citations)} indexed papers")
    outcome = Outcome(Question(id="q", question=answer.query, answerable=False), [], answer)
    assert invented_numbers(outcome) == []
    wrong = answer.text.replace(f"{len(answer.citations)} indexed", "7 indexed", 1)
    miscounted = Outcome(outcome.question, [], replace(answer, text=wrong))
    assert invented_numbers(miscounted) == ["7"]


def test_an_answerable_question_said_unstated_is_counted_apart_from_refusals(bundled) -> None:
    """An answer that says the abstract does not state what its abstract does state is no
    refusal (a paper is cited), but the summary counts it."""
    from eval.questions import Question
    from eval.runner import Outcome, kind_summary

    answer = bundled.ask("What does the CSR paper report?", llm="extractive")
    cited = [c.paper.paper_id for c in answer.citations]
    question = Question(id="q", question=answer.query, relevant=cited[:1], kind="specific")
    lead = "The abstract does not say: the abstract does not mention it."
    said = replace(answer, text=f"{lead}\n{answer.text}", coverage="unstated")
    unstated = question.model_copy(update={"kind": "unstated"})  # rightly said unstated
    outcomes = [Outcome(question, [], answer), Outcome(question, [], said)]
    summary = kind_summary([*outcomes, Outcome(unstated, [], said)])
    assert summary["answerable_refused"] == 0.0
    assert summary["answerable_said_unstated"] == 0.5
    # a fact no abstract gives answered "no indexed paper": passed, and counted apart
    lead = "No indexed paper does that."
    refused = replace(answer, text=f"{lead}\n{answer.text}", coverage="no_paper")
    summary = kind_summary([Outcome(unstated, [], refused), Outcome(unstated, [], said)])
    assert summary["passed"] == {"unstated": "2/2"}
    assert summary["unstated_said_no_paper"] == 1
