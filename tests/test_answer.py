"""Answers from the bundled corpus: citations checked, refusals, filters and follow-ups."""

from __future__ import annotations

import json
import re

import numpy as np
import pytest

from rag import Answer, Assistant, InputError, Step
from rag.testing import ScriptedGenerator
from rag.types import Hit, Paper

from .conftest import make_assistant


def scripted(bundled_index, embedder, reply: str) -> tuple[Assistant, ScriptedGenerator]:
    llm = ScriptedGenerator(reply)
    a = make_assistant(bundled_index, embedder, backend="local", generators={"local": llm})
    return a, llm


def test_the_paper_a_question_names_comes_first(bundled) -> None:
    for question, name in [
        ("What does the CSR paper report?", "CSR"),
        ("Which paper reconstructs protein structures from cryo-EM density maps?", "CryoACE"),
        ("How much does RLER improve over the best RLIR baseline?", "RLER"),
    ]:
        assert bundled.search(question, 5)[0].paper.title.startswith(name)


def test_extractive_answer_cites_retrieved_papers_with_quotes(bundled) -> None:
    answer = bundled.ask("Which papers are about model merging?", llm="extractive")
    assert answer.grounded and len(answer.citations) >= 2
    titles = [c.paper.title for c in answer.citations]
    assert any(t.startswith("OPIC") for t in titles) and any(t.startswith("Trap") for t in titles)
    retrieved = {h.paper.paper_id for h in answer.hits}
    for c in answer.citations:
        assert c.paper.paper_id in retrieved
        assert c.quote and c.quote in c.paper.abstract
        assert f"[{c.number}]" in answer.text


def test_bogus_citation_is_removed_and_counted(bundled_index, embedder) -> None:
    reply = "RLER improves by 6.2% over the best RLIR baseline [1]. It also cures cancer [9]."
    a, llm = scripted(bundled_index, embedder, reply)
    answer = a.ask("How much does RLER improve over the best RLIR baseline?")
    assert "[9]" not in answer.text and "cancer" not in answer.text
    assert answer.removed_citations == 1
    assert [r.statement for r in answer.removed] == ["It also cures cancer."]
    assert [c.number for c in answer.citations] == [1]
    assert answer.citations[0].paper.title.startswith("RLER")
    assert "6.2" in answer.citations[0].quote
    assert "[1] RLER" in llm.prompts[0]  # sources are numbered in code, in the prompt


def test_a_removed_statement_is_followed_by_its_abstracts_own_sentence(
    bundled_index, embedder
) -> None:
    """The model's wrong number is removed, and the abstract's sentence it was closest to
    follows the answer, quoted and cited: the user reads what the paper does report. So
    too when the wrong statement cites nothing, in an answer that cites one paper."""
    for marker in (" [1]", ""):
        reply = (
            "RLER aggregates diverse models with adaptive reward interpolation [1]. "
            f"RLER improves by 9.7% over the best RLIR baseline{marker}."
        )
        a, _ = scripted(bundled_index, embedder, reply)
        answer = a.ask("What does RLER aggregate, and what does it report against RLIR?")
        assert "9.7" not in answer.text
        assert [r.statement for r in answer.removed] == [
            "RLER improves by 9.7% over the best RLIR baseline."
        ]
        assert "RLER improves by 6.2% over the best RLIR baseline" in answer.text, answer.text
        assert [c.number for c in answer.citations] == [1], answer.text


def test_markers_are_renumbered_in_order_of_use(bundled_index, embedder) -> None:
    reply = (
        "Trap² uses weight re-scaling as a simple proxy for the merging process [2]. "
        "OPIC is an evolutionary optimization-based model merging framework [1]."
    )
    a, _ = scripted(bundled_index, embedder, reply)
    answer = a.ask("Compare the two model-merging papers.")
    assert [c.paper.title[:4] for c in answer.citations] == ["Trap", "OPIC"]
    assert "merging process [1]." in answer.text and "framework [2]." in answer.text


def test_an_invented_number_is_removed_and_reported(bundled_index, embedder) -> None:
    reply = (
        "RLER improves by 6.2% over the best RLIR baseline [1]. "
        "RLER was trained on 8 GPUs for 12 hours [1]."
    )
    a, _ = scripted(bundled_index, embedder, reply)
    answer = a.ask("How much does RLER improve over the best RLIR baseline?")
    assert "6.2%" in answer.text and "GPU" not in answer.text and "12" not in answer.text
    (removed,) = answer.removed
    assert "GPUs" in removed.statement and "number 8" in removed.reason


@pytest.mark.parametrize(
    ("question", "invented", "reason"),
    [
        # the number is in the abstract only as part of a name ("EMPIAR-10345")
        (
            "What dataset does CryoACE release?",
            "The new dataset built for CryoACE contains 10345 density maps [1].",
            "only inside a name",
        ),
        # every character of the formula is in the abstract ("two", "n"), the formula is not
        (
            "What sample complexity does the three-layer strategy achieve?",
            "The three-layer learning strategy achieves a sample complexity of O(n^2) [1].",
            '"O(n^2)" is not in the cited abstract',
        ),
    ],
)
def test_a_number_taken_from_a_name_or_an_invented_formula_is_removed(
    bundled_index, embedder, question: str, invented: str, reason: str
) -> None:
    a, _ = scripted(bundled_index, embedder, invented)
    answer = a.ask(question)
    assert invented.split(" [")[0] not in answer.text
    assert any(reason in r.reason for r in answer.removed), answer.removed


def test_a_copied_prompt_example_and_an_invented_expansion_are_removed(
    bundled_index, embedder
) -> None:
    reply = (
        "FooNet speeds up graph training by 2x [1]. "
        "CSR outperforms the SOTA by an average of 18.1% against strong APGD [1]. "
        "APGD (Adversarial Perturbation Guided Detection) is a detector [1]."
    )
    a, _ = scripted(bundled_index, embedder, reply)
    answer = a.ask("What does the CSR paper report against APGD?")
    assert "18.1%" in answer.text
    assert "FooNet" not in answer.text and "Guided Detection" not in answer.text
    assert len(answer.removed) == 2
    assert all(r.reason for r in answer.removed)


def test_a_statement_citing_the_wrong_source_is_moved_to_the_right_one(
    bundled_index, embedder
) -> None:
    reply = (
        "Trap² uses weight re-scaling as a simple proxy for the merging process [2]. "
        "OPIC achieves an average performance retention of 80.73% [2]."
    )
    a, _ = scripted(bundled_index, embedder, reply)
    answer = a.ask("Compare the two model-merging papers.")
    by_number = {c.number: c.paper.title for c in answer.citations}
    number = int(re.search(r"80\.73% \[(\d+)\]", answer.text).group(1))
    assert by_number[number].startswith("OPIC")
    assert answer.removed == ()


def test_claims_no_source_states_are_removed_not_shown(bundled_index, embedder) -> None:
    reply = (
        "RLER improves by 6.2% over the best RLIR baseline [1]. "
        "Bananas ripen faster in paper bags at room temperature."
    )
    a, _ = scripted(bundled_index, embedder, reply)
    answer = a.ask("How much does RLER improve over the best RLIR baseline?")
    assert "Bananas" not in answer.text
    assert any("Bananas" in r.statement for r in answer.removed)


def test_nothing_supported_becomes_the_not_covered_answer(bundled_index, embedder) -> None:
    a, _ = scripted(bundled_index, embedder, "Yes, [1] presents a new speech recognition model.")
    answer = a.ask("Which paper compresses speech recognition models for phones?")
    assert answer.coverage in ("not_covered", "no_paper")
    assert "presents a new speech recognition model" not in answer.text


def test_a_false_premise_is_answered_no_paper_without_the_llm(bundled_index, embedder) -> None:
    a, llm = scripted(bundled_index, embedder, "CryoACE is a GNN for molecule generation [1].")
    answer = a.ask("Which paper proposes a graph neural network for molecule generation?")
    assert answer.coverage == "no_paper" and answer.text.startswith("No indexed paper does that")
    assert "molecule" in answer.text.splitlines()[0]  # says what no abstract mentions
    assert llm.prompts == []
    for c in answer.citations:  # what the closest papers do say, quoted
        assert c.quote and c.quote in c.paper.abstract


def test_an_unstated_fact_is_said_to_be_unstated(bundled_index, embedder) -> None:
    a, llm = scripted(bundled_index, embedder, "OPIC used 8 GPUs [1].")
    for question in ["How many GPUs did OPIC use?", "What are the limitations of DensityFlow?"]:
        answer = a.ask(question)
        assert answer.coverage == "unstated", question
        assert answer.text.startswith("The abstract does not say")
        assert answer.citations and "GPUs [" not in answer.text
    assert llm.prompts == []


def test_out_of_corpus_question_is_refused_without_calling_the_llm(bundled_index, embedder) -> None:
    a, llm = scripted(bundled_index, embedder, "should never be said [1]")
    for question in ["How do I bake sourdough bread?", "What is the capital of France?"]:
        answer = a.ask(question)
        assert not answer.grounded and answer.citations == ()
        assert "do not cover" in answer.text
    assert llm.prompts == []


def test_a_reply_that_does_not_survive_falls_back_to_the_abstracts(bundled_index, embedder):
    a, _ = scripted(bundled_index, embedder, "The sources do not answer this question.")
    answer = a.ask("What is known about model merging?")  # not a list: the model answers
    assert "do not answer" not in answer.text
    assert [r.statement for r in answer.removed] == ["The sources do not answer this question."]
    assert {c.paper.title[:4] for c in answer.citations} == {"OPIC", "Trap"}
    for c in answer.citations:  # the abstracts' own sentences, each quoted
        assert c.quote in c.paper.abstract and c.quote.rstrip(". ") in answer.text


def test_stream_shows_only_checked_statements_then_the_answer(bundled_index, embedder) -> None:
    reply = "RLER improves by 6.2% over the best RLIR baseline [1] [7]. RLER used 64 GPUs [1]."
    a, _ = scripted(bundled_index, embedder, reply)
    events = list(a.stream("How much does RLER improve over the best RLIR baseline?"))
    steps = [e.stage for e in events if isinstance(e, Step)]
    assert steps == ["searching", "reading", "writing"]
    reading = next(e for e in events if isinstance(e, Step) and e.stage == "reading")
    assert reading.hits and reading.hits[0].paper.title.startswith("RLER")
    shown = "".join(e for e in events if isinstance(e, str))
    final = events[-1]
    assert isinstance(final, Answer) and shown == final.text
    assert "GPUs" not in shown and final.removed_citations == 1


def test_filters_apply_to_both_sides(bundled) -> None:
    assert bundled.search("model merging", 5, venue="NeurIPS") == []
    assert bundled.search("model merging", 5, year=2019) == []
    assert all(h.paper.year == 2026 for h in bundled.search("model merging", 5, venue="icml"))
    for mode in ("bm25", "dense"):
        assert bundled.search("model merging", 5, year=2025, mode=mode) == []
    assert bundled.search("ICML 2026 papers on model merging", 3)[0].paper.title.startswith(
        ("OPIC", "Trap")
    )
    assert bundled.search("NeurIPS papers on model merging") != []  # unknown venue: no filter


def test_followup_is_rewritten_and_answered_about_the_same_paper(bundled) -> None:
    first = bundled.ask("What does the CSR paper report?", llm="extractive")
    follow = bundled.ask("What are its limitations?", history=[first], llm="extractive")
    assert "CSR" in follow.query and follow.query != "What are its limitations?"
    assert follow.hits[0].paper.title.startswith("CSR")


@pytest.mark.parametrize("question", ["", "   "])
def test_empty_question_is_an_error(bundled, question: str) -> None:
    from rag import RagError

    with pytest.raises(RagError):
        bundled.ask(question)


def test_an_unknown_search_mode_is_an_error_naming_the_modes(bundled) -> None:
    with pytest.raises(
        InputError, match=r"^Unknown search mode 'bmm25'\. Use one of: hybrid, bm25, dense\.$"
    ):
        bundled.search("model merging", mode="bmm25")


@pytest.mark.parametrize("ask", ["ask", "topics"])
def test_an_unknown_backend_is_an_error_naming_the_backends(bundled, ask: str) -> None:
    message = r"^Unknown backend 'gpt'\. Use one of: local, openai, extractive\.$"
    with pytest.raises(InputError, match=message):
        if ask == "ask":
            bundled.ask("What does the CSR paper report?", llm="gpt")
        else:
            bundled.topics(llm="gpt")


def test_a_comparison_is_kept_when_each_part_is_stated_by_a_source(bundled_index, embedder):
    reply = (
        "OPIC is an evolutionary optimization-based model merging framework, while Trap² "
        "uses weight re-scaling as a simple proxy for the merging process, and OPIC "
        "achieves an average performance retention of 80.73% [1]."
    )
    a, _ = scripted(bundled_index, embedder, reply)
    answer = a.ask("Compare the two model-merging papers.")
    assert answer.removed == () and "[1, 2]" in answer.text
    assert sorted(c.paper.title[:4] for c in answer.citations) == ["OPIC", "Trap"]


@pytest.mark.parametrize(
    ("question", "papers"),
    [
        # a name the abstract introduces besides its title's, written without the superscript
        ("How do RLER and R3-Refiner use reinforcement learning differently?", ["RLER", "R³-B"]),
        # one paper named, the other described
        (
            "How do the dataset valuation paper and RLER deal with scarce training data?",
            ["RLER", "Scal"],
        ),
        (
            "How do SparseOpt and the selective KV recomputation paper make models efficient?",
            ["Info", "Spar"],
        ),
    ],
)
def test_a_comparison_reads_and_cites_both_papers(bundled, question: str, papers: list[str]):
    answer = bundled.ask(question, llm="extractive")
    assert sorted(c.paper.title[:4] for c in answer.citations) == papers


@pytest.mark.parametrize(
    ("question", "coverage"),
    [
        # the abstract gives numbers, but none for what is counted
        ("How many milliseconds of inference overhead does CSR add per image?", "unstated"),
        ("How many parameters does the movement-segment Transformer encoder have?", "unstated"),
        ("How many classification benchmarks was CSR evaluated on?", "answered"),
        # the abstract spells out acronyms for its own ideas, but names no model or dataset
        ("Which models does RLER ensemble to compute its rewards?", "unstated"),
        ("Which datasets was RP Flow evaluated on?", "unstated"),
        ("On which datasets was SparseOpt evaluated?", "answered"),
    ],
)
def test_a_count_or_a_name_the_abstract_lacks_is_said_to_be_unstated(
    bundled, question: str, coverage: str
) -> None:
    answer = bundled.ask(question, llm="extractive")
    assert answer.coverage == coverage, answer.text
    if coverage == "unstated":
        assert answer.text.startswith("The abstract does not say")


def test_a_comparison_ends_with_each_papers_own_sentence(bundled_index, embedder) -> None:
    reply = (  # covers both papers: no fallback, the papers' own sentences follow
        "OPIC is an evolutionary optimization-based model merging framework, while Trap² "
        "uses weight re-scaling as a simple proxy for the merging process [1]."
    )
    a, _ = scripted(bundled_index, embedder, reply)
    answer = a.ask("How do OPIC and Trap² differ?")
    lines = answer.text.splitlines()
    assert lines[0].startswith("OPIC is an evolutionary")
    own = [line for line in lines[1:] if line.startswith("- ")]
    assert {line[2:6] for line in own} == {"OPIC", "Trap"}, answer.text
    assert answer.removed == () and len(answer.citations) == 2


def test_earlier_work_the_abstract_names_is_not_the_papers_own(bundled_index, embedder) -> None:
    # the abstract says "Jung et al. (2025) introduce a hypothesis testing framework ..."
    reply = (
        "The LLM-judge confidence estimation paper introduces a hypothesis testing framework "
        "for guaranteeing agreement between large language models (LLMs) and human "
        "judgments [1]."
    )
    a, _ = scripted(bundled_index, embedder, reply)
    answer = a.ask("What does the paper on a confidence estimator for LLM judges propose?")
    assert "introduces a hypothesis testing framework" not in answer.text
    assert any("earlier work" in r.reason for r in answer.removed), answer.removed


def test_a_claim_widened_from_a_narrower_kind_is_removed(bundled_index, embedder) -> None:
    # CLASP's abstract gives logarithmic guarantees "for strongly convex problems" only
    reply = (
        "CLASP provides logarithmic regret guarantees for both convex and strongly convex "
        "problems [1]. The regret is upper bounded by O(log T) [1]."
    )
    a, _ = scripted(bundled_index, embedder, reply)
    answer = a.ask("What regret guarantees does CLASP prove?")
    assert "both convex and strongly convex" not in answer.text, answer.text
    assert any('"strongly convex" only' in r.reason for r in answer.removed), answer.removed
    assert "O(log T)" in answer.text  # the narrower claim it does make stays


def test_what_both_algorithms_do_needs_both_abstracts(bundled_index, embedder) -> None:
    # only the stopping rule's abstract bounds the cost-adjusted simple regret, not CLASP's
    reply = (
        "CLASP minimizes cumulative loss together with squared constraint violations [1]. "
        "Both algorithms provide theoretical guarantees bounding the expected cost-adjusted "
        "simple regret [2]."
    )
    a, _ = scripted(bundled_index, embedder, reply)
    answer = a.ask("Compare CLASP and the cost-aware Bayesian optimization stopping rule.")
    assert "Both algorithms" not in answer.text, answer.text
    assert any(r.statement.startswith("Both algorithms") for r in answer.removed)


def test_what_one_paper_says_of_its_own_algorithms_stands(bundled_index, embedder) -> None:
    reply = (
        "In the strongly convex case, both CLASP algorithms guarantee that the regret is upper "
        "bounded by O(log T) [1]."
    )
    a, _ = scripted(bundled_index, embedder, reply)
    answer = a.ask("What regret bound does CLASP give for strongly convex problems?")
    assert "both CLASP algorithms guarantee" in answer.text, answer.removed


def test_a_sentence_that_says_nothing_checkable_is_not_shown(bundled_index, embedder) -> None:
    a, _ = scripted(
        bundled_index,
        embedder,
        "This method is described in the abstract. It is explained there in detail. "
        "CSR outperforms the SOTA by an average of 18.1% against strong APGD [1].",
    )
    answer = a.ask("What does the CSR paper report?")
    assert "described in the abstract" not in answer.text
    assert "explained there" not in answer.text
    assert "18.1%" in answer.text, answer.text


def indexed(tmp_path, embedder, papers: list[dict]) -> Assistant:
    """An assistant over an index of ``papers`` (id, title, abstract) alone."""
    source = tmp_path / "papers.jsonl"
    source.write_text("".join(json.dumps(p) + "\n" for p in papers))
    a = make_assistant(tmp_path / "index", embedder)
    a.ingest([source])
    return a


DESCRIBED = [
    {
        "id": "dict",
        "title": "Fast Dictionary Learning with a Smoothed Wasserstein Loss",
        "abstract": "We consider the dictionary learning problem when the data are histograms. "
        "We use the Wasserstein distance as the fitting error between each original point "
        "and its reconstruction. Experiments on text topic modelling and image datasets show "
        "that the smoothed loss is fast to optimise.",
    },
    {
        "id": "ode",
        "title": "Neural Solvers for Stiff Differential Equations",
        "abstract": "Stiff differential equations defeat explicit solvers. We train a network "
        "to predict implicit steps, which cuts solver time by half on chemical kinetics.",
    },
]


def test_a_question_about_a_paper_no_abstract_describes_is_answered_no_paper(
    tmp_path, embedder
) -> None:
    """The closest paper lacks most of what the question says of the one it describes: no
    indexed paper is that one (not "the abstract does not say" of the closest)."""
    a = indexed(tmp_path, embedder, DESCRIBED)
    described = a.ask(
        "What word error rate does the paper on speech recognition from raw audio "
        "recordings with a Wasserstein loss reach?"
    )
    assert described.coverage == "no_paper", described.text
    assert described.text.startswith("No indexed paper does that")
    # the paper is there, the detail is not: said of that paper
    detail = a.ask("Which optimiser does the Wasserstein dictionary learning paper use?")
    assert detail.coverage in ("unstated", "answered"), detail.text


def test_a_question_on_one_paper_with_both_or_between_or_differential_is_checked(
    tmp_path, embedder
) -> None:
    """ "Which paper ... both A and B", "... between A and B", "differentially private ..."
    describe one paper, not two compared: the premise is checked like any other."""
    private = {
        "id": "private",
        "title": "Private Causal Discovery",
        "abstract": "Causal discovery often runs on medical records that must stay private. "
        "We give a differentially private method for learning additive noise models, with "
        "guarantees for each of its variants.",
    }
    a = indexed(tmp_path, embedder, [*DESCRIBED, private])
    for asked in (
        "Which dataset does the paper on differentially private federated training of deep "
        "networks use?",
        "Which paper uses the Wasserstein distance between simulated and observed data to do "
        "approximate Bayesian computation?",
    ):
        answer = a.ask(asked)
        assert answer.coverage == "no_paper", answer.text
        assert answer.text.startswith("No indexed paper does that"), answer.text
    held = a.ask("Which paper learns additive noise models from private records, differentially?")
    assert held.coverage == "answered", held.text


def test_which_earlier_works_a_described_paper_draws_on_is_asked_of_that_paper(
    tmp_path, embedder
) -> None:
    """ "Which earlier works does the X method draw on, and from which years?" asks X's
    abstract, which names them; its asking words ("earlier", "years") are no premise that
    some indexed paper must say."""
    solvers = {
        "id": "solvers",
        "title": "Neural Solvers for Stiff Differential Equations",
        "abstract": "Stiff differential equations defeat explicit solvers. Building on the "
        "implicit schemes of Gear (1971) and the neural ODEs of Chen et al. (2018), we train "
        "a network to predict implicit steps, which cuts solver time by half on chemical "
        "kinetics.",
    }
    a = indexed(tmp_path, embedder, [DESCRIBED[0], solvers])
    answer = a.ask(
        "Which earlier works does the neural stiff differential equation solver draw on, "
        "and from which years?"
    )
    assert answer.coverage == "answered", answer.text
    assert [c.paper.title for c in answer.citations] == [solvers["title"]], answer.text
    assert "1971" in answer.text, answer.text


GIVEN = [
    *DESCRIBED,
    {
        "id": "ggm",
        "title": "Large-Scale Algorithms for Sparse Conditional Gaussian Graphical Models",
        "abstract": "We estimate sparse conditional Gaussian graphical models with a Newton "
        "method that scales to millions of variables. The solver is applied to genomic data.",
    },
]


def test_a_short_form_the_abstract_spells_out_is_not_missing(tmp_path, embedder) -> None:
    """ "GGM" in a question, "Gaussian graphical models" in the abstract: the question's
    terms are there, so its answer is not "the abstract does not mention "GGM""."""
    a = indexed(tmp_path, embedder, GIVEN)
    spelled = a.ask("Which data is the sparse conditional GGM solver applied to?")
    assert "GGM" not in spelled.text.split("\n")[0], spelled.text
    assert spelled.coverage == "answered", spelled.text


NAMED_LATE = [
    {
        "id": "late",
        "title": "Radial Basis Function Solvers for Metric Learning",
        "abstract": "We present a radial basis function solver for deep networks. Our method "
        "treats all training features as function centres. The centres are made scalable by "
        "an approximate nearest neighbour search. The same loss is used for metric learning "
        "and classification. We show that the solver beats embedding approaches on two "
        "retrieval benchmarks. When used as a classifier, our method outperforms a softmax "
        "classifier on CUB-200-2011 and Cars196.",
    },
]


def test_a_name_the_abstract_gives_late_is_not_said_to_be_missing(tmp_path, embedder) -> None:
    """The datasets are in the abstract's last sentence: "which datasets" is answered, not
    "the abstract names none"."""
    a = indexed(tmp_path, embedder, NAMED_LATE)
    answer = a.ask("Which datasets does the radial basis function solver use as a classifier?")
    assert answer.coverage == "answered", answer.text
    assert "names none" not in answer.text


UNNAMED = [
    {
        "id": "forecast",
        "title": "Bayesian Forecasting with Change Points and Anomalies",
        "abstract": "Forecasting methods such as ARIMA break down when a series has change "
        "points or anomalies. We propose a Bayesian state space model that detects both and "
        "forecasts through them. On several real-world series our model forecasts more "
        "accurately than the baselines.",
    },
]


@pytest.mark.parametrize(
    "asked",
    [
        "Which real-world time series datasets are used to evaluate the Bayesian forecasting "
        "model with change points and anomalies?",
        "Besides ARIMA, which baselines does the Bayesian forecasting model with change points "
        "beat?",
    ],
)
def test_which_named_things_an_abstract_does_not_name_are_said_unstated(
    tmp_path, embedder, asked
) -> None:
    """ "Which <a few words> datasets", also after a clause: the abstract names none (ARIMA is
    in the question, or only earlier work), so the answer says so first."""
    a = indexed(tmp_path, embedder, UNNAMED)
    answer = a.ask(asked)
    assert answer.coverage == "unstated", answer.text
    assert answer.text.startswith("The abstract does not say"), answer.text


ADAM = [
    {
        "id": "adam",
        "title": "On the Convergence of Adaptive Optimizers",
        "abstract": "Adaptive methods such as RMSProp and Adam scale gradients by moving "
        "averages of squared past gradients. We show that this can prevent convergence on "
        "simple convex problems. We propose new variants of Adam with long-term memory of "
        "past gradients that fix the problem.",
    },
    {
        "id": "chasing",
        "title": "Chasing Convex Functions with Advice",
        "abstract": "We study convex function chasing with black-box advice. We propose two "
        "algorithms. The first, $\\textsc{Interp}$, interpolates between the advice and a "
        "robust algorithm. The second, \\rm bdinterp, needs bounded diameter.",
    },
]


@pytest.mark.parametrize(
    ("asked", "coverage"),
    [
        ("What is the name of the Adam variant with long-term memory?", "unstated"),
        # the paper's own names answer what it calls its algorithms, in any type
        ("What are the names of the two algorithms for chasing convex functions?", "answered"),
    ],
)
def test_what_something_is_called_is_a_name_the_abstract_gives_or_unstated(
    tmp_path, embedder, asked, coverage
) -> None:
    a = indexed(tmp_path, embedder, ADAM)
    answer = a.ask(asked)
    assert answer.coverage == coverage, answer.text


SAMPLER = [  # colt2022 (eval/corpora)
    {
        "id": "sampler",
        "title": "Improved analysis for a proximal algorithm for sampling",
        "abstract": (
            "We study the proximal sampler of Lee, Shen, and Tian (2021) and obtain new "
            "convergence guarantees under weaker assumptions than strong log-concavity: "
            "namely, our results hold for (1) weakly log-concave targets, and (2) targets "
            "satisfying isoperimetric assumptions which allow for non-log-concavity. We "
            "demonstrate our results by obtaining new state-of-the-art sampling guarantees "
            "for several classes of target distributions. We also strengthen the connection "
            "between the proximal sampler and the proximal method in optimization by "
            "interpreting the former as an entropically regularized Wasserstein gradient flow"
            " and the latter as the limit of one."
        ),
    },
]


def test_a_paper_described_by_its_title_is_answered_from(tmp_path, embedder) -> None:
    """No sentence comes close to the question, the title does: the paper is answered
    from, not "the indexed papers do not cover this question"."""
    a = indexed(tmp_path, embedder, SAMPLER)
    answer = a.ask("How does the improved analysis of the Lee-Shen-Tian proximal sampler "
                   "interpret the sampler?")  # fmt: skip
    assert [c.paper.paper_id for c in answer.citations] == ["sampler"], answer.text
    assert "Wasserstein gradient flow" in answer.text


def test_the_sentences_of_a_named_paper_are_chosen_by_what_is_asked_of_it(embedder) -> None:
    """Every sentence of a named paper is about it: the one that says what is asked ranks
    first, not those that repeat its name."""
    from rag.answer.answering import SentenceVectors, score_hits
    from rag.types import Hit, Paper

    abstract = (
        "We propose iTM-VAE, a topic model with infinitely many topics. iTM-VAE adapts the "
        "number of topics to the data. Unlike other nonparametric models, iTM-VAE is trained "
        "with autoencoding variational inference. A variant of iTM-VAE models the topic "
        "mixture with a product of experts. Experiments on two news corpora show better "
        "perplexity than the baselines."
    )
    paper = Paper("itm", "iTM-VAE: A Nonparametric Topic Model", abstract)
    vectors = SentenceVectors(embedder, 100)
    (scored,) = score_hits("What corpora is iTM-VAE tested on?", [Hit(paper, 1.0)], vectors)
    assert scored.named
    best = scored.sentences[int(scored.similarities.argmax())]
    assert best.startswith("Experiments on two news corpora"), best


HALFSPACES = [
    {
        "id": "massart",
        "title": "Optimal Statistical Query Lower Bounds for Halfspaces with Massart Noise",
        "abstract": "We give statistical query (SQ) lower bounds for learning halfspaces when "
        "every label is flipped with probability at most eta. The bound holds even when the "
        "optimal error is exponentially small in the dimension and an overwhelming fraction "
        "of examples are noiseless.",
    },
    {
        "id": "intersections",
        "title": "Statistical Query Lower Bounds for Intersections of Halfspaces",
        "abstract": "We prove statistical query (SQ) lower bounds for agnostically learning "
        "intersections of halfspaces under Gaussian marginals, with queries of tolerance "
        "polynomial in the dimension.",
    },
]


def test_a_comparison_statement_about_one_paper_resting_on_the_other_is_removed(
    tmp_path, embedder
) -> None:
    """The model gives the Massart paper's sentence to the intersections paper, citing the
    Massart paper: every word but the subject is in the cited abstract, and it is removed."""
    source = tmp_path / "papers.jsonl"
    source.write_text("".join(json.dumps(p) + "\n" for p in HALFSPACES))
    said = " holds even when the optimal error is exponentially small in the dimension and "
    said += "an overwhelming fraction of examples are noiseless [1]."
    wrong = "The SQ lower bound for intersections of halfspaces" + said
    right = "The SQ lower bound for halfspaces with Massart noise" + said
    for reply, kept in ((wrong, False), (right, True)):
        llm = ScriptedGenerator(reply)
        generators = {"local": llm}
        a = make_assistant(tmp_path / "index", embedder, backend="local", generators=generators)
        a.ingest([source])
        answer = a.ask(
            "How do the noise models differ between the SQ lower bound for halfspaces with "
            "Massart noise and the SQ lower bound for intersections of halfspaces?"
        )
        assert (reply[:-5] in answer.text) is kept, answer.text
        assert any("another paper" in r.reason for r in answer.removed) is not kept


def test_a_compared_paper_s_own_sentence_is_one_the_answer_has_not_said(embedder) -> None:
    """Beside a comparison, each paper's own sentence: not the one the model already put in
    its words, when the paper says another of its own."""
    from rag.answer.answering import SentenceVectors, _own_contribution, score_hits
    from rag.answer.support import Abstract
    from rag.types import Hit, Paper

    abstract = (
        "We propose RLER, which aggregates diverse reward models with adaptive reward "
        "interpolation. We show that RLER scales stably on unlabeled samples."
    )
    paper = Paper("rler", "RLER: reinforcement learning with ensembled rewards", abstract)
    vectors = SentenceVectors(embedder, 100)
    question = "How does RLER aggregate reward models and handle unlabeled data?"
    (scored,) = score_hits(question, [Hit(paper, 1.0)], vectors)
    source = Abstract.of(1, paper.title, abstract, scored.vectors, vectors)
    said = "RLER aggregates diverse reward models with adaptive reward interpolation [1]."
    assert _own_contribution(scored, source, said).startswith("We show that RLER scales")
    first = _own_contribution(scored, source, "")
    assert first.startswith("We propose") or first.startswith("We show")


class _Reads:
    """A stand-in for the verifier that reads one sentence as the answer."""

    def __init__(self, answering: str) -> None:
        self.answering = answering

    def per_sentence(self, text: str, title: str, sentences) -> np.ndarray:
        return np.array([4.0 if self.answering in s else 0.0 for s in sentences])


TIDEWALK = Paper(
    "tidewalk",
    "Tidewalk: Resistance Distances for Large Sparse Graphs",
    "On large sparse graphs, random-walk distances between nodes lose global information "
    "about clusters. As graphs grow, these node distances mostly reflect the local density of "
    "nodes. Many node distances for large graphs have been proposed, but none is both cheap "
    "and global. Tidewalk is a new family of node distances for large sparse graphs. Its "
    "distances are derived from electrical flows in a resistor network built on the graph. "
    "They can be computed in near-linear time.",
)


def test_a_sentence_read_as_the_answer_is_quoted_before_those_that_describe_the_paper(
    embedder,
) -> None:
    """A question describes its paper in the words of the opening sentences; the sentence
    the verifier reads as answering it is quoted first, though further from it in meaning."""
    from rag.answer.answering import SentenceVectors, _best_sentences, read, score_hits

    question = "What physical idea underlies the new node distances for large sparse graphs?"
    (scored,) = score_hits(question, [Hit(TIDEWALK, 1.0)], SentenceVectors(embedder, 100))
    assert not any("electrical" in s for s in _best_sentences(scored, 2, question))
    (read_hit,) = read([scored], question, _Reads("electrical flows"))
    assert any("electrical" in s for s in _best_sentences(read_hit, 2, question))
    # "Which paper ...?" describes the paper: its closest sentences say it, unread
    which = "Which paper derives node distances for large sparse graphs?"
    assert read([scored], which, _Reads("electrical flows"))[0].reading is None


def test_sentences_are_read_unless_turned_off(tmp_path, embedder) -> None:
    on = make_assistant(tmp_path / "on", embedder)
    off = make_assistant(tmp_path / "off", embedder, **{"retrieval.read_sentences": False})
    assert on.reader is not None and off.reader is None
    assert on.verifier is None  # the verifier's other uses stay off by default
