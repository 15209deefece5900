"""The statement check on small made-up abstracts, not on any indexed corpus."""

from __future__ import annotations

import re

import pytest

from rag.answer import judge as judges
from rag.answer import premise, rules, support
from rag.answer.answering import Checker, Source
from rag.index.embedder import Embedder
from rag.types import Hit, Paper

TITLE = "Taming Momentum: Stable Adaptive Optimisers"
ABSTRACT = (
    "Several recently proposed adaptive optimisers such as RMSProp, Adam and Nadam scale "
    "their updates by running averages of squared gradients. We show that these methods can "
    "diverge on simple convex problems. We propose TameAdam, an Adam variant with a long-term "
    "memory of past gradients, and prove that it converges."
)


def made_up(title: str, text: str, embedder: Embedder) -> support.Abstract:
    """A made-up abstract prepared for checking, its sentences and their parts embedded."""
    sentences = list(support.Abstract.of(1, title, text, embedder.embed(["x"])).sentences)
    return support.Abstract.of(1, title, text, embedder.embed(sentences), embedder.embed)


@pytest.fixture(scope="module")
def abstract(embedder: Embedder) -> support.Abstract:
    return made_up(TITLE, ABSTRACT, embedder)


def kept(text: str, abstract: support.Abstract, embedder: Embedder) -> support.Verdict:
    statement = support.Statement(text, (1,), 0)
    return support.judge(statement, embedder.embed_query(support.plain(text)), {1: abstract})


def test_a_name_the_abstract_gives_only_as_earlier_work_is_not_the_papers(
    abstract: support.Abstract, embedder: Embedder
) -> None:
    wrong = kept("The Adam variant with long-term memory proposed here is called Nadam.", abstract,
                 embedder)  # fmt: skip
    assert not wrong.kept
    assert "Nadam" in wrong.reason
    right = kept("The Adam variant with long-term memory proposed here is called TameAdam.",
                 abstract, embedder)  # fmt: skip
    assert right.kept, right.reason
    # a statement about the earlier work may name it
    assert kept("Existing optimisers such as Nadam scale their updates by running averages.",
                abstract, embedder).kept  # fmt: skip


def test_a_title_before_a_quoted_sentence_is_not_a_claim(embedder: Embedder) -> None:
    """A listed line "Title: sentence" quotes the sentence; words of the title ("Only",
    "All") are the paper's name, not claims the sentence must make."""
    title = "Translation Using Monolingual Corpora Only"
    text = (
        "We learn to translate without any parallel data. Sentences of two languages are "
        "mapped into one latent space by a shared encoder."
    )
    paper = made_up(title, text, embedder)
    quoted = f"{title}: We learn to translate without any parallel data."
    assert kept(quoted, paper, embedder).kept
    # the same word said as a claim of the sentence still needs the abstract to say it
    claimed = "We learn to translate only from parallel data."
    assert not kept(claimed, paper, embedder).kept


def test_a_title_with_a_question_mark_stays_one_heading() -> None:
    title = "Do GANs learn the distribution? Some Theory and Empirics"
    statements = support.split_statements(
        f"- {title}: GANs learn distributions "
        "of low support [1]. They study BiGAN [1].\n- Plain title: One. Two [2].",
        [title, "Plain title"],
    )
    assert [s.text for s in statements] == [
        "Do GANs learn the distribution? Some Theory and Empirics: GANs learn distributions "
        "of low support.",
        "They study BiGAN.",
        "Plain title: One.",
        "Two.",
    ]
    assert [s.cites for s in statements] == [(1,), (1,), (2,), (2,)]
    # a bullet whose text before the colon is no paper's title is split as any other line
    written = support.split_statements("- It improves accuracy. It is fast: 2x [1].", [title])
    assert [s.text for s in written] == ["It improves accuracy.", "It is fast: 2x."]


def test_a_quoted_formula_with_a_greek_letter_stands(embedder: Embedder) -> None:
    """A sentence quoted from the abstract with "$\\sigma^2$" in it is in the abstract; a
    formula the abstract does not have is not."""
    title = "Channel Capacity in Learning Gaussian Mixtures"
    text = (
        "We learn the centers of a Gaussian mixture with covariance $\\sigma^2 I$. "
        "The threshold occurs at $\\frac{\\log k}{d} = \\frac12\\log( 1+\\frac{1}{\\sigma^2})$, "
        "the capacity of the Gaussian channel."
    )
    paper = made_up(title, text, embedder)
    assert support.unsupported(paper.sentences[1], paper) == ""
    assert "is not in the cited abstract" in support.unsupported(
        "The threshold occurs at $\\tau^3$.", paper
    )


def test_a_sentence_naming_a_kind_and_its_narrower_kind_stands_as_quoted(
    embedder: Embedder,
) -> None:
    """ "... interdomain sparse approximations and sparse approximations for Cox processes"
    quoted from the abstract stands; a statement widening the abstract's narrower kind to
    the broader one ("both convex and strongly convex" of "strongly convex") does not."""
    title = "Sparse Variational Inference as a Divergence between Processes"
    text = (
        "We interpret sparse variational inference as a divergence between processes. "
        "Finally we show how the framework sheds light on interdomain sparse approximations "
        "and sparse approximations for Cox processes. Its regret bound holds for strongly "
        "convex losses."
    )
    paper = made_up(title, text, embedder)
    assert kept(paper.sentences[1], paper, embedder).kept
    widened = kept("Its regret bound holds for convex and strongly convex losses.", paper, embedder)
    assert not widened.kept and '"strongly convex" only' in widened.reason


def test_a_short_form_the_abstract_spells_out_is_the_abstract_s(embedder: Embedder) -> None:
    """ "GP", "GCNs" and "ResNet" name what the abstract spells out ("Gaussian process",
    "graph convolutional networks", "residual networks"); a short form it does not spell
    out is still not in it."""
    title = "Scalable Change Surfaces"
    text = (
        "We present a scalable Gaussian process model for change surfaces. We compare it with "
        "graph convolutional networks and residual networks on three spatial datasets."
    )
    paper = made_up(title, text, embedder)
    assert support.unsupported("The GP model is compared with GCNs and ResNet.", paper) == ""
    assert '"GAN"' in support.unsupported("The GP model is compared with a GAN.", paper)


def test_a_name_inside_a_longer_name_is_not_said(embedder: Embedder) -> None:
    """A numeral or a short form inside a longer name is another name ("III" is not "II",
    "RoBERTa" is not "BERT"), and two words whose first letters happen to match ("in its")
    spell out no short form; a plural or a hyphenated part is the name said."""
    title = "Transcription Timing in Yeast"
    text = (
        "The 5S rRNA is transcribed by RNA polymerase III in its own compartment. We fine-tune "
        "RoBERTa and an MMD-GAN on the resulting reads."
    )
    paper = made_up(title, text, embedder)
    assert '"II"' in support.unsupported("The 5S rRNA is transcribed by RNA polymerase II.", paper)
    assert '"BERT"' in support.unsupported("The paper fine-tunes BERT on the reads.", paper)
    assert support.unsupported("The paper fine-tunes RoBERTa and GANs on the reads.", paper) == ""
    assert support.unsupported("RNA polymerase III transcribes the 5S rRNA.", paper) == ""


def checker(
    question: str, papers: list[tuple[str, str]], embedder: Embedder, reads: bool = False
) -> Checker:
    """A checker of answers to ``question`` citing made-up ``papers`` (title, abstract) as
    sources 1, 2, ... (``reads``: a model reads statements after the reply)."""
    sources = []
    for n, (title, text) in enumerate(papers, start=1):
        paper = Paper(paper_id=f"p{n}", title=title, abstract=text)
        abstract = made_up(title, text, embedder)
        abstract = support.Abstract.of(n, title, text, abstract.vectors, embedder.embed)
        sources.append(Source(n, Hit(paper, score=1.0), abstract.sentences, abstract))
    return Checker(sources, embedder, question, reads=reads)


TIME_LIMITS = (
    "Time Limits in Reinforcement Learning",
    "In reinforcement learning, it is common to let an agent interact for a fixed amount of "
    "time with its environment before resetting it. We argue that time limits are either part "
    "of the environment or only used to facilitate learning. In the first case, we propose to "
    "include a notion of the remaining time as part of the agent's input. In the second case, "
    "we propose to continue bootstrapping at the end of each partial episode.",
)
SENSORS = (
    "Changepoint Detection in Sensor Time Series",
    "We propose a Bayesian method that detects changepoints in multivariate sensor time "
    "series. It reaches 94.1% F1 on three industrial datasets.",
)


def answered(question: str, answer: str, embedder: Embedder) -> Checker:
    """The checker after it has read ``answer`` to ``question``, with the time-limits and
    sensor papers as sources 1 and 2."""
    check = checker(question, [TIME_LIMITS, SENSORS], embedder)
    check.feed(answer)
    check.close()
    return check


def test_the_questions_own_name_for_a_paper_is_not_a_claim(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """ "the time-limits-in-RL paper" is how the question calls the paper, not something
    its abstract must say: a statement that calls it so is checked for what it claims."""
    question = "What do the authors of the time-limits-in-RL paper propose for the first case?"
    answer = (
        "The authors of the time-limits-in-RL paper propose to include a notion of the "
        "remaining time as part of the agent's input in the first case [1]."
    )
    check = answered(question, answer, embedder)
    assert "time-limits-in-RL paper propose" in check.shown, check.removed()
    assert [c.paper.paper_id for c in check.citations()] == ["p1"]
    # with the rule off, the description's words are checked as a claim and the statement goes
    monkeypatch.setattr(premise, "_DESCRIBED", re.compile(rules.NEVER))
    check = answered(question, answer, embedder)
    assert check.shown == ""


def test_the_questions_name_for_a_paper_does_not_carry_another_papers_fact(
    embedder: Embedder,
) -> None:
    question = "What does the time-limits-in-RL paper report?"
    for marker in ("[1]", "[2]", ""):  # the paper described, the one that says it, none
        check = answered(
            question,
            f"The time-limits-in-RL paper reaches 94.1% F1 on three datasets {marker}.",
            embedder,
        )
        assert check.shown == "", marker


def test_a_description_with_a_detail_the_abstract_lacks_stays_a_claim(embedder: Embedder) -> None:
    """ "the transformer-based time-limits paper": the abstract says nothing of transformers,
    so the description is checked as part of what the statement says."""
    question = "What does the transformer-based time-limits paper propose for the first case?"
    check = answered(
        question,
        "The transformer-based time-limits paper proposes to include a notion of the remaining "
        "time as part of the agent's input [1].",
        embedder,
    )
    assert check.shown == "", check.shown


def test_a_title_as_the_subject_is_not_a_claim(embedder: Embedder) -> None:
    """ "Translation Using Monolingual Corpora Only learns ...": "Only" is the title's."""
    title = "Translation Using Monolingual Corpora Only"
    text = (
        "We learn to translate without any parallel data. Sentences of two languages are "
        "mapped into one latent space by a shared encoder."
    )
    paper = made_up(title, text, embedder)
    subject = f"{title} maps sentences of two languages into one latent space."
    assert kept(subject, paper, embedder).kept, kept(subject, paper, embedder).reason
    # the claim word said outside the title is still a claim
    assert not kept(f"{title} only maps sentences into one latent space.", paper, embedder).kept


def test_two_papers_called_by_the_questions_names_do_not_swap_facts(embedder: Embedder) -> None:
    """A statement that calls both papers as the question does is checked as written: the
    names cannot carry one paper's fact over to the other."""
    question = "How do the time-limits-in-RL paper and the sensor changepoint paper differ?"
    assert len(premise.descriptions(question)) == 2
    check = answered(
        question,
        "The time-limits-in-RL paper reaches 94.1% F1 on three industrial datasets, while the "
        "sensor changepoint paper includes the remaining time in the agent's input [1, 2].",
        embedder,
    )
    assert check.shown == "", check.shown


def test_a_comparison_citing_both_papers_stands_when_each_states_its_part(
    embedder: Embedder,
) -> None:
    question = "How do the sensor changepoint method and the remaining-time paper differ?"
    check = answered(
        question,
        "The sensor changepoint method detects changepoints in multivariate sensor time "
        "series, while the remaining-time paper includes a notion of the remaining time as "
        "part of the agent's input [1, 2].",
        embedder,
    )
    assert "remaining-time paper includes" in check.shown, check.removed()
    assert {c.paper.paper_id for c in check.citations()} == {"p1", "p2"}


def test_a_claim_word_inside_a_compound_is_no_claim(embedder: Embedder) -> None:
    """ "no-regret learners", "first-order methods": "no" and "first" name a kind here, and
    need no sentence close to the statement that says them."""
    title = "Strategizing against Learners in Bayesian Games"
    text = (
        "We study repeated games where one player, the learner, employs a no-regret learning "
        "strategy, while the other, the optimizer, maximizes its utility. The payoffs depend "
        "on a type drawn from a public distribution. We ask what the optimizer can guarantee "
        "and whether learning algorithms can cap its payoff. We show these algorithms can be "
        "implemented efficiently. We define a new combinatorial notion of regret called "
        "polytope swap regret, of independent interest."
    )
    paper = made_up(title, text, embedder)
    said = "The notion of regret defined in the work on no-regret learners is polytope swap regret."
    assert kept(said, paper, embedder).kept, kept(said, paper, embedder).reason
    # the word on its own is still a claim
    alone = "No notion of regret other than polytope swap regret is defined."
    assert not kept(alone, paper, embedder).kept


def test_a_marker_as_the_subject_becomes_the_papers_name(embedder: Embedder) -> None:
    """ "[1] proposes ..." moved its marker to the end would leave "proposes ..." with no
    subject: the cited paper's name takes the marker's place."""
    check = answered(
        "What does the paper on time limits propose for partial episodes?",
        "[1] proposes to continue bootstrapping at the end of each partial episode.",
        embedder,
    )
    assert check.shown == (
        "Time Limits in Reinforcement Learning proposes to continue bootstrapping at the end "
        "of each partial episode [1]."
    ), check.removed()
    # a marker before a name is a citation, not a subject
    assert support.cited_subjects("[2] CLIP is robust.", {2: "X"}) == "[2] CLIP is robust."
    assert support.cited_subjects("- [2] uses X. [1] adds Y.", {1: "A", 2: "B"}) == (
        "- B [2] uses X. A [1] adds Y."
    )


def test_a_paper_named_before_the_questions_words_only_says_the_question_back(
    embedder: Embedder,
) -> None:
    """ "<title> proposes <the question's words>" answers nothing: the title is the paper's
    name, not content of its own."""
    question = "Which paper proposes to continue bootstrapping at the end of each partial episode?"
    check = answered(
        question,
        "[1] proposes to continue bootstrapping at the end of each partial episode.",
        embedder,
    )
    assert check.shown == "", check.shown
    assert [r.reason for r in check.removed()] == ["it only says the question back"]


SEPARATION = (
    "A Median Tester for Symmetry",
    "We study testing whether a distribution is symmetric about zero. We show that the sign "
    "tester achieves the optimal constant in the number of standard deviations of separation "
    "between symmetric and asymmetric inputs. We then introduce a median tester and show that "
    "it not only matches this separation, but also has lighter tails.",
)


def test_a_paraphrase_borrowing_the_questions_premise_is_removed(embedder: Embedder) -> None:
    """Asked what the median tester "loses relative to" the sign tester (it matches it), a
    statement that says so with the abstract's other words is the question's premise said
    back: two of the question's words the abstract has none of are more than a paraphrase
    may borrow from it."""
    question = "What constant does the median tester lose relative to the sign tester?"
    statement = (
        "The sign tester achieves the optimal constant in the number of standard deviations of "
        "separation between symmetric and asymmetric inputs, which the median tester loses "
        "relative to it [1]."
    )
    check = checker(question, [SEPARATION], embedder)
    check.feed(statement)
    check.close()
    assert check.shown == ""
    assert [r.reason for r in check.removed()] == [
        'the cited abstract does not say "loses", "relative", the question\'s words'
    ]
    # read as close as can be to its sentence, the statement is within the paraphrase
    # allowance: only the question's words tell it apart
    paper = made_up(*SEPARATION, embedder)
    asked = frozenset(support.content_stems(question))
    assert support.check(statement, paper.vectors[1], paper)[0]
    assert support.check(statement, paper.vectors[1], paper, asked)[0] == ""
    # one borrowed word of the question is a paraphrase ("attains" for "achieves")
    check = checker("Which constant does the sign tester attain?", [SEPARATION], embedder)
    check.feed(
        "The sign tester attains the optimal constant in the number of standard deviations of "
        "separation between symmetric and asymmetric inputs [1]."
    )
    check.close()
    assert check.shown.startswith("The sign tester attains"), check.removed()


def test_a_comparison_calling_each_paper_as_the_question_does_is_checked_part_by_part(
    embedder: Embedder,
) -> None:
    """ "A-described does X, while B-described does Y [1]": each part, its description made
    "the paper", is checked against the paper its description fits, and the statement
    cites both; a part the paper it describes does not state removes it."""
    question = (
        "How do the paper comparing time limits in reinforcement learning and the paper on "
        "changepoints in sensor time series differ?"
    )
    check = answered(
        question,
        "The paper comparing time limits in reinforcement learning includes the remaining time "
        "in the agent's input, while the paper on changepoints in sensor time series detects "
        "changepoints in multivariate sensor time series [1].",
        embedder,
    )
    assert "includes the remaining time" in check.shown, check.removed()
    assert {c.paper.paper_id for c in check.citations()} == {"p1", "p2"}
    swapped = answered(
        question,
        "The paper comparing time limits in reinforcement learning detects changepoints in "
        "multivariate sensor time series, while the paper on changepoints in sensor time "
        "series includes the remaining time in the agent's input [1].",
        embedder,
    )
    assert swapped.shown == "", swapped.shown


def test_names_a_question_puts_side_by_side_are_each_found_as_names(
    embedder: Embedder, monkeypatch
) -> None:
    text = (
        "We surveyed general practitioners (GPs) in Australia about prescribing. A New "
        "Zealand Caucasian Crohn's disease population answered a dietary questionnaire. "
        "SAP-deficient mice lack germinal center T(FH) cells. We study layer sizes and "
        "weight normalization."
    )
    abstract = made_up("A made-up abstract", text, embedder)
    for phrase in ("Australian GP", "New Zealand Crohn", "SAP-using", "TFH", "GPs"):
        assert premise.has_phrase(abstract, phrase), phrase
    # lower-case words joined, a name said only in lower case, or a name not said at all
    for phrase in ("text-to-video", "Layer Normalization", "New Zealand Asthma", "Danish GP"):
        assert not premise.has_phrase(abstract, phrase), phrase
    monkeypatch.setattr(rules, "NAMES_APART", False)
    assert not premise.has_phrase(abstract, "Australian GP")


def test_british_and_american_spellings_are_one_word(embedder: Embedder) -> None:
    abstract = made_up("Tumour growth", "We measure tumour growth and haemoglobin.", embedder)
    terms = premise.terms("What tumor growth and how much hemoglobin is measured?")
    assert premise.missing(terms, abstract) == []
    back = support.Statement("The tumors grow fast [1].", (1,), 0)
    assert support.repeats(back, "How fast do the tumours grow?")
    assert support.unstated_words("Tumor growth and hemoglobin were measured.", abstract) == []


CALIBRATION = (
    "Soil Moisture from Low-Cost Radar",
    "We estimate soil moisture in farm fields from a low-cost radar mounted on a tractor. "
    "The radar readings were compared with gravimetric samples taken on some plots to "
    "calibrate the estimates. In addition, crop yield was recorded for every field of the "
    "second season. Across 40 fields, the estimates were within 3% of the samples.",
)


def test_a_fact_answering_the_question_from_another_sentence_is_removed(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Asked how the estimates were calibrated on some plots, a statement that gives the
    question's frame ("calibrated on some plots") with another sentence's fact ("by crop
    yield") holds every word in the abstract, but no sentence says them together: removed.
    The same frame with the sentence's own fact stands."""
    question = "What were the radar's estimates compared with to calibrate them on some plots?"
    check = checker(question, [CALIBRATION], embedder)
    check.feed("The estimates were calibrated on some plots by recording crop yield [1]. ")
    check.feed("They were calibrated on some plots against gravimetric samples [1].")
    check.close()
    assert check.shown.startswith("They were calibrated on some plots against gravimetric")
    assert "crop yield" not in check.shown
    [removed] = check.removed()
    assert removed.reason.startswith("the sentence it rests on does not say"), removed.reason
    # every word is the abstract's: removed for its wording, which a reading may overrule
    verdict = next(v for v in check.verdicts if not v.kept)
    assert isinstance(verdict.reason, support.Shortfall)
    # without the question, nothing tells the two apart: the words are all the abstract's
    paper = made_up(*CALIBRATION, embedder)
    blend = "The estimates were calibrated on some plots by recording crop yield [1]."
    vector = embedder.embed_query(support.plain(blend))
    assert support.check(blend, vector, paper)[0]
    asked = frozenset(support.content_stems(question))
    assert support.check(blend, vector, paper, asked)[0] == ""
    monkeypatch.setattr(support, "ASKED_ELSEWHERE", rules.RULES["ASKED_ELSEWHERE"].off)
    assert support.check(blend, vector, paper, asked)[0]


@pytest.mark.slow
@pytest.mark.usefixtures("local_llm_file")
def test_the_local_model_reads_a_fact_from_another_sentence_as_unsupported(
    embedder: Embedder,
) -> None:
    """The real model reads the statement the check set aside for the question's words:
    the crop-yield calibration stays removed, the true one stood before any reading."""
    from rag.answer.judge import ModelJudge
    from rag.answer.llm import local_llm
    from rag.settings import Settings

    question = "What were the radar's estimates compared with to calibrate them on some plots?"
    check = checker(question, [CALIBRATION], embedder)
    check.feed("The estimates were calibrated on some plots by recording crop yield [1]. ")
    check.feed("They were calibrated on some plots against gravimetric samples [1].")
    check.close()
    read: list[str] = []

    class Recorded(ModelJudge):
        def supports(self, statement: str, paper: Paper) -> float:
            read.append(statement)
            return super().supports(statement, paper)

    check.reread(Recorded(local_llm(Settings().llm)))
    assert [s for s in read if "crop yield" in s], read  # set aside, then read
    assert "gravimetric samples" in check.shown
    assert "crop yield" not in check.shown, check.shown


class Readings:
    """A judge whose reading of every statement is ``value`` (the local model is slow; the
    test below reads with it), keeping what it was asked to read."""

    def __init__(self, value: float) -> None:
        self.value, self.read = value, []

    def supports(self, statement: str, paper: Paper) -> float:
        self.read.append(statement)
        return self.value


JOINED = "The estimates were calibrated against crop yield [1]. "
SAID_ONCE = "Across 40 fields, the estimates were within 3% of the samples [1]."


@pytest.mark.parametrize("reading, stands", [(1.0, False), (4.0, True)])
def test_a_statement_joining_two_sentences_waits_for_the_reading(
    embedder: Embedder, reading: float, stands: bool
) -> None:
    """ "calibrated against crop yield" holds only words of the abstract, from two sentences
    (calibration is against gravimetric samples; crop yield was only recorded): the word
    check keeps it. With a model to read it after the reply, it is not shown as it is
    written; it is read, and stands only when the reading reaches ``JUDGE_JOINED``. A
    statement one sentence says is shown at once and never read."""
    check = checker("", [CALIBRATION], embedder, reads=True)
    check.feed(JOINED + SAID_ONCE)
    check.close()
    assert check.shown == SAID_ONCE  # the joining statement waits, the other did not
    judge = Readings(reading)
    shown = check.reread(judge)
    assert judge.read == [JOINED.replace(" [1]", "").strip()]
    assert ("crop yield" in shown) is stands, shown
    assert ("crop yield" in check.shown) is stands
    if not stands:
        [removed] = check.removed()
        assert '"crop", "yield"' in removed.reason, removed.reason


def test_without_a_reading_a_joining_statement_stands_as_the_words_keep_it(
    embedder: Embedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A backend whose model cannot be read, or the rule off: nothing is held back."""
    check = checker("", [CALIBRATION], embedder)
    assert check.feed(JOINED + SAID_ONCE).startswith("The estimates were calibrated against crop")
    monkeypatch.setattr(judges, "JOINED", rules.RULES["JUDGE_JOINED"].off)
    check = checker("", [CALIBRATION], embedder, reads=True)
    assert check.feed(JOINED + SAID_ONCE).startswith("The estimates were calibrated against crop")


@pytest.mark.slow
@pytest.mark.usefixtures("local_llm_file")
def test_the_local_model_reads_a_joining_statement_as_unsupported(embedder: Embedder) -> None:
    """The real model reads the statement held back for joining two sentences: the
    calibration against crop yield goes, the sentence said once stood at once."""
    from rag.answer.judge import ModelJudge
    from rag.answer.llm import local_llm
    from rag.settings import Settings

    check = checker("", [CALIBRATION], embedder, reads=True)
    check.feed(JOINED + SAID_ONCE)
    check.close()
    assert check.reread(ModelJudge(local_llm(Settings().llm))) == ""
    assert check.shown == "Across 40 fields, the estimates were within 3% of the samples [1]."
    assert [r for r in check.removed() if "crop yield" in r.statement]


DIEOUT = (
    "Tick Survival Across Latitudes",
    "We followed tick cohorts at ten field sites along a latitudinal gradient for six years. "
    "Tick die-out at northern sites was due to a steady rise in mortality of every life stage "
    "rather than a single threshold event in one life stage. At the southern sites, "
    "larvae reached 12.5 mm and nymphs 8.1 mm on average.",
)


@pytest.mark.parametrize(
    "statement, why",
    [
        (
            "Tick die-out at northern sites was due to a single threshold event in one life "
            "stage [1].",
            'says "rather than", which it leaves out',
        ),
        ("At the southern sites, larvae reached 8.1 mm and nymphs 12.5 mm [1].", "other order"),
    ],
)
def test_a_statement_its_sentence_turns_away_from_waits_for_the_reading(
    embedder: Embedder, statement: str, why: str
) -> None:
    """Every word of each statement is its sentence's, so the word check keeps it; but the
    sentence says "rather than" where the statement does not, or gives the two numbers the
    other way round. With a model to read it, it is held back and read; read low, it goes
    with the reason. The same facts said the sentence's way stream at once."""
    check = checker("", [DIEOUT], embedder, reads=True)
    assert check.feed(statement + " ") == ""
    check.close()
    assert check.reread(Readings(1.0)) == ""
    [removed] = check.removed()
    assert why in removed.reason, removed.reason
    faithful = (
        "Tick die-out at northern sites was due to a steady rise in mortality rather than a "
        "single threshold event [1]. At the southern sites, larvae reached 12.5 mm and nymphs "
        "8.1 mm [1]."
    )
    check = checker("", [DIEOUT], embedder, reads=True)
    check.feed(faithful)
    check.close()
    assert check.shown == faithful
    assert check.reread(Readings(1.0)) == "" and not check.removed()


def test_a_number_of_another_sentence_joins_two_sentences(embedder: Embedder) -> None:
    """A part's numbers count as its words: the second method's rate given with the first
    one's number is a part no one sentence says; each method with its own number joins
    nothing, and a number with a thousands comma stays one number."""
    title = "Stable Optimisers"
    text = (
        "For Euclidean geometry, our reduction converges at rate 1/T^2 with stability T^2/n. "
        "For general geometries, our mirror descent variant converges at rate 1/T with "
        "stability T/n on 1,000 problems."
    )
    paper = made_up(title, text, embedder)
    blend = "The mirror descent variant for general geometries converges at rate 1/T^2."
    assert support.joined_words(blend, paper) == ['"2"']
    faithful = (
        "The mirror descent variant for general geometries converges at rate 1/T on 1,000 problems."
    )
    assert support.joined_words(faithful, paper) == []


@pytest.mark.slow
@pytest.mark.usefixtures("local_llm_file")
def test_the_local_model_reads_a_statement_its_sentence_turns_away_from(
    embedder: Embedder,
) -> None:
    """The real model reads the statement that drops the sentence's "rather than": it goes;
    the statement said the sentence's way stood at once and is not read."""
    from rag.answer.judge import ModelJudge
    from rag.answer.llm import local_llm
    from rag.settings import Settings

    turned = (
        "Tick die-out at northern sites was due to a single threshold event in one life stage [1]. "
    )
    faithful = "At the southern sites, larvae reached 12.5 mm and nymphs 8.1 mm [1]."
    check = checker("", [DIEOUT], embedder, reads=True)
    assert check.feed(turned + faithful) == ""
    assert check.close() == faithful
    assert check.reread(ModelJudge(local_llm(Settings().llm))) == ""
    assert check.shown == faithful
    assert [r for r in check.removed() if "threshold event" in r.statement]
