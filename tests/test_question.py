"""Filters named in questions, and follow-up rewrites."""

from __future__ import annotations

import re

import numpy as np
import pytest

from rag.answer import premise
from rag.answer.question import parse_filters, rewrite_followup
from rag.retrieve.search import Filters
from rag.types import Answer, Citation, Paper

VENUES = ["ICML", "NeurIPS", "ICLR"]


def test_venue_and_year_are_taken_from_the_question() -> None:
    filters, query = parse_filters("ICML 2026 papers on model merging", VENUES)
    assert (filters.venue, filters.year_min, filters.year_max) == ("ICML", 2026, 2026)
    assert "ICML" not in query and "2026" not in query and "model merging" in query


def test_year_ranges_and_open_ranges() -> None:
    assert parse_filters("papers from 2015 to 2017 about bandits", VENUES)[0].year_min == 2015
    assert parse_filters("papers from 2015 to 2017 about bandits", VENUES)[0].year_max == 2017
    since = parse_filters("NeurIPS papers since 2016 on GANs", VENUES)[0]
    assert (since.venue, since.year_min, since.year_max) == ("NeurIPS", 2016, None)
    assert parse_filters("work before 2010 on kernels", VENUES)[0].year_max == 2009


def test_unknown_venues_and_plain_questions_are_left_alone() -> None:
    filters, query = parse_filters("what does the Nature paper say about proteins?", VENUES)
    assert not filters and query == "what does the Nature paper say about proteins?"


def _answer(*titles: str) -> Answer:
    cites = tuple(
        Citation(i, Paper(paper_id=t, title=t, abstract="x")) for i, t in enumerate(titles, 1)
    )
    return Answer(text="...", grounded=True, query="q", citations=cites)


def test_followup_names_the_paper_it_refers_to() -> None:
    history = [_answer("DensityFlow", "RLER")]
    assert rewrite_followup("What are its limitations?", history) == (
        "What are DensityFlow's limitations?"
    )
    assert "RLER" in rewrite_followup("and the other one?", history)
    both = rewrite_followup("How do they differ?", history)
    assert "DensityFlow" in both and "RLER" in both


def test_an_ordinal_of_the_paper_s_own_things_or_this_task_names_the_first_paper() -> None:
    history = [_answer("Interp", "RLER")]
    # the paper's own second algorithm, not the second paper cited
    assert rewrite_followup("What does its second algorithm achieve?", history) == (
        "What does Interp's second algorithm achieve?"
    )
    assert rewrite_followup("What were earlier approaches to this task limited to?", history) == (
        "What were earlier approaches to the task of Interp limited to?"
    )
    assert "RLER" in rewrite_followup("What does the second one report?", history)


def test_standalone_questions_are_not_rewritten() -> None:
    history = [_answer("DensityFlow")]
    assert rewrite_followup("Which papers study protein folding?", history) == (
        "Which papers study protein folding?"
    )
    assert rewrite_followup("What are its limitations?", None) == "What are its limitations?"


def test_plain_chat_history_still_gives_the_followup_its_context() -> None:
    history = [
        {"role": "user", "content": "What does the CSR paper report?"},
        {"role": "assistant", "content": "CSR is a test-time defense [1]."},
    ]
    rewritten = rewrite_followup("What are its limitations?", history)
    assert "CSR paper" in rewritten and rewritten.startswith("What are its limitations?")


def test_years_in_citations_are_not_filters() -> None:
    filters, query = parse_filters(
        "Which paper builds on the framework of Jung et al. (2025)?", VENUES
    )
    assert not filters and query.endswith("(2025)?")
    assert parse_filters("ICML papers (Smith, 2019) style in 2018", VENUES)[0].year_min == 2018


def test_a_pronoun_whose_referent_is_in_the_question_is_not_rewritten() -> None:
    history = [_answer("Ensemble Adversarial Training: Attacks and Defenses")]
    question = "How does NerveNet represent an agent, and what transfer tasks does it benchmark?"
    assert rewrite_followup(question, history) == question
    described = "Which datasets does the graph kernel paper use, and how does it do on them?"
    assert rewrite_followup(described, history) == described
    assert rewrite_followup("Which datasets does it use?", history) == (
        "Which datasets does Ensemble Adversarial Training: Attacks and Defenses use?"
    )


def test_a_comparison_is_told_by_its_two_subjects_and_split_at_them() -> None:
    from rag.answer.premise import compares, two_sides

    two = (
        "Which benchmark environments are NerveNet and the master-slave RL architecture tested on?"
    )
    assert compares(two)
    assert compares("What tools do the private PCA paper and the Gaussian estimator rely on?")
    assert compares("Between the rate paper and the optimizer paper, which is about statistics?")
    assert not compares("How does NerveNet represent an agent, and what does it benchmark?")
    assert not compares("Which papers study graphs?")
    assert compares("CSR and Trap are both defenses; what does each protect against?")
    assert compares("How does it differ from normalizing flows?")
    # one paper's two things, or a word that only starts like "differ"
    assert not compares("Which paper handles both label noise and class imbalance?")
    assert not compares("Which paper studies the trade-off between depth and width?")
    assert not compares("What does the differentially private estimator assume?")
    assert not compares("Which papers train differentiable renderers?")
    # "each" or "both" of one paper's things asks of that paper; "different" compares nothing
    assert not compares("How many epochs does the sparse coding model run for each layer?")
    assert not compares("What does the parser output for each of the two sentence types?")
    assert not compares("Which losses does the ranking method use, and are both convex?")
    assert not compares("Which games does the agent that sees different renderings use?")
    assert not compares("What distance between observed and simulated data does it use?")
    assert compares("What do the two pruning papers each remove, and do both retrain?")
    assert compares("Do both papers use ImageNet?")
    assert two_sides(two) == [
        "Which benchmark environments are NerveNet",
        "the master-slave RL architecture tested on?",
    ]
    assert two_sides("What does NerveNet do?") == []


def test_a_question_calling_two_papers_by_descriptions_compares_them(monkeypatch) -> None:
    from rag.answer import rules
    from rag.answer.premise import compares

    two = (
        "In the amyloidosis transplant study and the EML4-ALK lung adenocarcinoma study, which "
        "factor was linked to survival in each?"
    )
    assert compares(two)
    assert compares("The sparse coding paper and the dropout work both prune; what does each keep?")
    # one description, however long, is one paper
    assert not compares("Which cell line and which antibody did the calcium influx study use?")
    monkeypatch.setattr(rules, "TWO_DESCRIBED", False)
    assert not compares(two)


def test_what_a_question_asks_of_its_paper_is_read_without_the_clause_describing_it() -> None:
    from rag.answer.premise import asked_part

    assert (
        asked_part("How many GPUs train the network that fuses residual units into one operator?")
        == "How many GPUs train the network?"
    )
    # the clause opening the question ends at the comma before what is asked
    assert (
        asked_part("In the paper that bounds regret by covering numbers, what exponent is shown?")
        == "In the paper, what exponent is shown?"
    )
    # "below which" is the clause's; "such that" and "so that" describe nothing
    assert (
        asked_part("What rate holds at the noise level below which recovery is easy?")
        == "What rate holds at the noise level?"
    )
    kept = [
        "What datasets is the graph kernel CNN evaluated on?",
        "On which datasets does the parser, trained on treebanks that vary, report accuracy?",
        "Which matrix is returned such that its condition number is constant?",
        "Which papers study robust testing so that outliers are tolerated?",
    ]
    for question in kept:
        assert asked_part(question) == question


def test_what_a_question_says_of_its_paper_is_read_as_a_question_for_that_paper() -> None:
    from rag.answer.premise import description

    assert (
        description("How many GPUs train the network that fuses residual units into one op?")
        == "Which paper is about the network that fuses residual units into one op?"
    )
    assert (
        description("In the paper that bounds regret by covering numbers, what exponent is shown?")
        == "Which paper is about the paper that bounds regret by covering numbers?"
    )
    assert description("What datasets is the graph kernel CNN evaluated on?") is None


def test_a_comparison_searches_each_paper_without_what_it_asks_of_both() -> None:
    from rag.answer.premise import subjects
    from rag.answer.support import method_name

    asked = "How do the graph-kernel CNN and the GCN training paper differ in task and method?"
    assert subjects(asked) == ["the graph-kernel CNN", "the GCN training paper"]
    assert subjects("How do NoisyNet and RESLOPE differ?") == ["NoisyNet", "RESLOPE"]
    assert subjects("What does NerveNet do?") == []
    # a title's bracketed short form is the paper's name
    assert method_name("Generalized Ideal Parent (GIP): Discovering Hidden Variables") == "GIP"
    assert method_name("(Bandit) Convex Optimization with Biased Noisy Oracles") == ""


def test_a_question_about_a_described_paper_does_not_ask_to_find_one() -> None:
    from rag.answer.premise import asks_to_find

    assert asks_to_find("Which paper proposes a graph network for molecules?")
    assert asks_to_find("What recent methods use diffusion for planning?")
    assert asks_to_find("Are there papers on protein folding?")
    # asked of the paper it describes: its premise is that paper's, not "some paper does"
    assert not asks_to_find("What does the paper on continuous-time flows propose?")
    assert not asks_to_find("What trick does the paper on GAN support size use?")
    # the papers another one builds on or tests are asked of that one
    assert not asks_to_find("Which earlier works does the L-BFGS method draw on, and when?")
    assert not asks_to_find("Which baselines did they compare against?")


def test_a_question_asking_which_named_things_is_told_by_its_noun() -> None:
    from rag.answer.premise import asks_for_names

    assert asks_for_names("Which real-world time series datasets are used to evaluate it?")
    assert asks_for_names("Besides English-French, which language pair does it use?")
    assert asks_for_names("On which benchmarks is the model evaluated?")
    # tasks are mostly described, not named; a verb between is another question
    assert not asks_for_names("Which downstream tasks are the embeddings used for?")
    assert not asks_for_names("What is the main idea of the model?")
    assert not asks_for_names("Which papers release new datasets?")  # asks to find papers


def test_a_year_or_venue_quoted_as_part_of_a_title_is_no_filter() -> None:
    titles = ["Winning the NeurIPS 2018 Pommerman Competition", "Atlas 2030: sky surveys"]
    venues = ["NeurIPS", "ACML"]
    asked = "What does Winning the NeurIPS 2018 Pommerman Competition report?"
    assert parse_filters(asked, venues, titles) == (Filters(), asked)
    asked = "What does atlas 2030: sky surveys find?"  # three words of the title, any case
    assert parse_filters(asked, venues, titles) == (Filters(), asked)
    # outside a title's words, the same year and venue are filters
    scoped, rest = parse_filters("Which NeurIPS 2018 papers study games?", venues, titles)
    assert (scoped.venue, scoped.year_min, scoped.year_max) == ("NeurIPS", 2018, 2018)
    assert rest == "Which papers study games?"


@pytest.mark.parametrize(
    ("short", "text", "spelled"),
    [
        ("gp", "Scalable Gaussian Processes for change surfaces", True),
        ("ggm", "sparse conditional Gaussian graphical models", True),
        ("resnet", "Decoupling the layers in residual networks", True),
        ("dhsbm", "the degree-heterogeneous stochastic block model", True),
        ("gan", "a generative model trained by gradient descent", False),
        ("resnet", "residual connections in recurrent networks", False),
    ],
)
def test_a_short_form_is_spelled_out_by_initials_or_syllables(short, text, spelled) -> None:
    assert premise.spelled_out(short, re.findall(r"[a-z0-9]+", text.lower())) is spelled


def test_only_words_written_with_two_capitals_are_short_forms() -> None:
    forms = premise.short_forms("Which data is the sparse GGM solver with ResNet and a GP long?")
    assert forms == {"ggm", "resnet", "gp"}


def test_a_name_with_a_small_first_letter_is_the_paper_name() -> None:
    from rag.text.titles import introduced_names

    said = "In this work, we propose iTM-VAE, which is a Bayesian nonparametric topic model."
    assert introduced_names(said) == ("iTM-VAE",)
    assert introduced_names("In this work, we propose iterative refinement, which helps.") == ()


def test_a_sentence_naming_what_was_asked_for_comes_first() -> None:
    from rag.answer.answering import ScoredHit, answer_bonus
    from rag.answer.premise import names_asked
    from rag.types import Hit, Paper

    assert names_asked("What datasets is iTM-VAE evaluated on?") == "dataset"
    assert names_asked("Which paper uses ImageNet?") == ""
    sentences = [
        "Two variants of iTM-VAE are proposed, iTM-VAE-Prod and iTM-VAE-G.",
        "Experimental results on 20News and Reuters RCV1-V2 datasets show gains.",
    ]
    abstract = "In this work, we propose iTM-VAE, which is a topic model. " + " ".join(sentences)
    paper = Paper("p", "A Topic Model", abstract)
    scored = ScoredHit(Hit(paper, 1.0), sentences, np.zeros(2), np.zeros((2, 384)), True)
    bonus = answer_bonus(scored, "What datasets is iTM-VAE evaluated on?")
    assert bonus[1] > bonus[0]


def test_a_follow_up_that_quotes_a_title_is_about_that_paper_alone() -> None:
    from rag.answer.answering import names_paper, without_name

    paper = Paper("p", "Non-Gaussian Component Analysis with Log-Density Gradient Estimation", "x")
    asked = f"How does {paper.title} find the subspace?"  # a follow-up's rewrite
    assert names_paper(asked, paper)
    assert without_name(asked, paper) == asked  # the title's words say what it is about
    assert not names_paper("How does component analysis find a subspace?", paper)
    assert not names_paper("What is new?", Paper("q", "What is new", "x"))  # too short


def test_a_number_in_words_counts_things_only_just_before_them() -> None:
    from rag.answer.answering import _counts

    assert _counts("We compare two families of streaming algorithms.", "famili", set())
    assert _counts("Experiments use 64 particles on large data.", "particl", set())
    # "one" as a pronoun near the noun is no count of it
    assert not _counts(
        "It is inspired by particle filtering where one uses samples.", "particl", set()
    )


def test_a_failure_the_paper_explains_is_not_a_limitation_asked_of_it() -> None:
    from rag.answer.premise import asks_limitations

    assert asks_limitations("Where does the CSR defense fail?")
    assert asks_limitations("What are the limitations of OPIC?")
    # what makes other methods fail to converge is what the paper is about
    assert not asks_limitations(
        "What part of Adam-style optimizers causes them to fail to converge?"
    )


def test_a_question_joining_two_asks_is_read_as_each_ask() -> None:
    asks = premise.asks
    assert asks("How does the tester handle corrupted samples, and on which data is it run?") == [
        "How does the tester handle corrupted samples?",
        "On which data is it run?",
    ]
    assert asks("Which loss does the tester use and what does it guarantee?") == [
        "Which loss does the tester use?",
        "What does it guarantee?",
    ]
    # one ask, though it says "and"
    for one in ("Which papers use Huber and hinge losses?", "How do the two testers compare?"):
        assert asks(one) == [one]
