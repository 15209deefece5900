"""A question asked of one paper, judged by the local model on top of the word checks: a
described paper no source is gets "No indexed paper does that", an abstract that does not
state the answer gets "The abstract does not say" (``answering.judged_gap``)."""

from __future__ import annotations

import json
import re

import pytest

from rag import Answer, Assistant
from rag.answer import judge as judges
from rag.answer import premise as premises
from rag.answer import rules
from rag.testing import ScriptedGenerator

from .conftest import make_assistant

PAPERS = [
    {
        "id": "made-up-tester",
        "title": "Robust Uniformity Testing with the Huber Loss",
        "abstract": "We study testing whether samples come from the uniform distribution over "
        "a finite domain. We introduce a tester built on the Huber loss of the empirical "
        "counts, which is robust to a small fraction of corrupted samples. We prove that its "
        "sample complexity is optimal up to constant factors. Experiments on synthetic data "
        "confirm the theory.",
    },
    {
        "id": "made-up-bandit",
        "title": "Streaming Bandits with Limited Memory",
        "abstract": "We study multi-armed bandits where arms arrive in a stream and the "
        "learner can store only a few arms at a time. We give an algorithm that stores a "
        "single arm and whose regret is within a logarithmic factor of the best algorithm "
        "with full memory, using several passes over the stream. We show that a single pass "
        "cannot match that regret.",
    },
    {
        "id": "made-up-changepoint",
        "title": "Changepoint Detection in Sensor Time Series",
        "abstract": "We propose a Bayesian method that detects changepoints in multivariate "
        "sensor time series. It reaches 94.1% F1 on three industrial datasets, ahead of "
        "kernel and likelihood-ratio baselines.",
    },
    {
        "id": "made-up-games",
        "title": "Non-Stationary Strategies for Two-Player Zero-Sum Markov Games",
        "abstract": "We study two-player zero-sum Markov games with discrete actions. We extend "
        "several non-stationary reinforcement learning algorithms to these games and prove "
        "bounds on the performance of the resulting strategies. The bounds improve with the "
        "length of the cycle of non-stationary strategies used. Experiments on random games "
        "confirm the analysis.",
    },
]


class Reader:
    """The local model's ``yes_or_no`` with fixed log-odds per (title, ask), the same
    interface as ``LocalLlamaCpp.yes_or_no``; it records what it was asked."""

    def __init__(self, odds: dict[tuple[str, str], float]) -> None:
        self.odds = odds
        self.asked: list[tuple[str, str]] = []

    def yes_or_no(self, messages: list[dict[str, str]]) -> float:
        user = messages[-1]["content"]
        title = user.split("\n", 1)[0].removeprefix("Title: ")
        says = judges.ASK_SAYS.split("{", 1)[0]  # "does the abstract mention <phrase>"
        asks = (judges.ASK, judges.ASK_IS_IT, judges.ASK_ANSWERS, says, judges.ASK_SUPPORTS)
        ask = next(a for a in asks if a in user)
        self.asked.append((title, ask))
        return self.odds.get((title, ask), -3.0)


@pytest.fixture(scope="module")
def index(tmp_path_factory, embedder):
    folder = tmp_path_factory.mktemp("premises")
    source = folder / "papers.jsonl"
    source.write_text("".join(json.dumps(p) + "\n" for p in PAPERS), encoding="utf-8")
    make_assistant(folder / "index", embedder).ingest([source])
    return folder / "index"


def judged(
    index, embedder, odds, reply: str, reading: type[Reader] | None = None, **overrides
) -> tuple[Assistant, Reader]:
    writer = ScriptedGenerator(reply)
    reader = (reading or Reader)(odds)
    writer.llm = reader
    a = make_assistant(index, embedder, "local", generators={"local": writer}, **overrides)
    return a, reader


TESTER = PAPERS[0]["title"]
DESCRIBED = "Which paper introduces a uniformity tester based on the Huber loss of the counts?"
ASKED = "What does the Huber-loss uniformity tester do about corrupted samples?"


def test_a_described_paper_no_source_is_gets_no_indexed_paper(index, embedder) -> None:
    # every word of the question is in the tester's abstract: the word checks let it through
    a, reader = judged(index, embedder, {}, "The tester uses the Huber loss [1].")
    answer = a.ask(DESCRIBED)
    assert answer.text.startswith("No indexed paper does that"), answer.text
    assert answer.coverage == "no_paper"
    # the closest sources were read, asked whether each is the paper described
    assert {ask for _, ask in reader.asked} == {judges.ASK_IS_IT}
    assert 1 <= len(reader.asked) <= judges.READ


def test_the_paper_held_to_be_it_answers_when_its_abstract_states_the_answer(
    index, embedder
) -> None:
    sure = {(TESTER, judges.ASK_IS_IT): judges.IS_IT_FIND, (TESTER, judges.ASK_ANSWERS): 2.0}
    a, _ = judged(index, embedder, sure, "The tester uses the Huber loss of the counts [1].")
    answer = a.ask(DESCRIBED)
    assert answer.coverage == "answered", answer.text
    assert [c.paper.paper_id for c in answer.citations] == ["made-up-tester"]


def test_an_abstract_that_does_not_state_the_answer_gets_the_abstract_does_not_say(
    index, embedder
) -> None:
    odds = {(TESTER, judges.ASK_IS_IT): 2.0, (TESTER, judges.ASK_ANSWERS): judges.ANSWERS - 0.1}
    a, reader = judged(index, embedder, odds, "It is robust to a small fraction of them [1].")
    answer = a.ask(ASKED)
    assert answer.text.startswith("The abstract does not say"), answer.text
    assert answer.coverage == "unstated"
    assert (TESTER, judges.ASK_ANSWERS) in reader.asked
    # the same abstract, held to state it: answered
    odds[(TESTER, judges.ASK_ANSWERS)] = judges.ANSWERS
    a, _ = judged(index, embedder, odds, "It is robust to a small fraction of them [1].")
    assert a.ask(ASKED).coverage == "answered"


# "withstand", "contaminated", "inputs": more than a third of its terms, none of them a name,
# are not in the tester's abstract ("robust to a small fraction of corrupted samples")
REWORDED_QUESTION = "How does the Huber loss uniformity tester withstand contaminated inputs?"


def test_words_an_abstract_lacks_are_read_by_the_model_before_the_abstract_does_not_say(
    index, embedder
) -> None:
    """A question whose words the abstract says otherwise: the word checks find it lacks
    them; the model, holding the abstract to state the answer at ``ANSWERS_WORDS``, lets it
    through. Below that, "The abstract does not say" names the words."""
    odds = {(TESTER, judges.ASK_IS_IT): 2.0, (TESTER, judges.ASK_ANSWERS): judges.ANSWERS_WORDS}
    reply = "It is robust to a small fraction of corrupted samples [1]."
    a, reader = judged(index, embedder, odds, reply)
    answer = a.ask(REWORDED_QUESTION)
    assert answer.coverage == "answered", answer.text
    assert "robust to a small fraction of corrupted samples [1]" in answer.text
    assert (TESTER, judges.ASK_ANSWERS) in reader.asked
    odds[(TESTER, judges.ASK_ANSWERS)] = judges.ANSWERS_WORDS - 0.1
    a, _ = judged(index, embedder, odds, reply)
    answer = a.ask(REWORDED_QUESTION)
    assert answer.coverage == "unstated", answer.text
    assert '"contaminated"' in answer.text.split("\n", 1)[0], answer.text
    # a value asked for is more than wording: however sure the reading, not stated
    odds[(TESTER, judges.ASK_ANSWERS)] = 9.0
    a, _ = judged(index, embedder, odds, reply)
    asked = "What value of the contamination does the Huber loss uniformity tester withstand?"
    assert a.ask(asked).coverage == "unstated"


def test_an_answer_nothing_of_which_stands_is_said_unstated_unless_read_surely(
    index, embedder
) -> None:
    """Nothing the model wrote stood the check (what it gave is in no sentence of the
    abstract): the abstract's closest sentences are not shown as if they answered. "The
    abstract does not say" leads, unless the model holds the abstract to state the answer at
    ``ANSWERS_UNCHECKED``; each reading is taken once."""
    unsure = judges.ANSWERS_UNCHECKED - 0.1
    assert unsure >= judges.ANSWERS  # the premise check lets the question through
    odds = {(TESTER, judges.ASK_IS_IT): 2.0, (TESTER, judges.ASK_ANSWERS): unsure}
    # its last sentence, the paper's title said again, is not joined to what follows it
    reply = (
        "It discards them by a majority vote [1]. "
        "It is robust uniformity testing with the Huber loss."
    )
    a, reader = judged(index, embedder, odds, reply)
    answer = a.ask(ASKED)
    assert answer.coverage == "unstated", answer.text
    assert answer.text.startswith("The abstract does not say"), answer.text
    assert "majority vote" not in answer.text and "It is robust" not in answer.text
    assert "corrupted samples [1]" in answer.text  # the abstract's own sentence, cited
    assert reader.asked.count((TESTER, judges.ASK_ANSWERS)) == 1
    # held to state it surely: the closest sentences, as they were
    odds[(TESTER, judges.ASK_ANSWERS)] = judges.ANSWERS_UNCHECKED
    a, _ = judged(index, embedder, odds, reply)
    answer = a.ask(ASKED)
    assert answer.coverage == "answered", answer.text
    assert "corrupted samples [1]" in answer.text


# asked of the tester, described by a clause that repeats its abstract, which gives no rate
CLAUSE = "that is built on the Huber loss of the empirical counts"
CLAUSED = f"What learning rate is used by the tester {CLAUSE}?"


class ReadsTheClause(Reader):
    """A reader that, like the local model, holds the abstract more surely to state the
    answer when the question repeats the abstract's words; it records the questions."""

    def __init__(self, odds: dict[tuple[str, str], float]) -> None:
        super().__init__(odds)
        self.questions: list[str] = []

    def yes_or_no(self, messages: list[dict[str, str]]) -> float:
        question = messages[-1]["content"].split("Question: ")[-1].split("\n")[0]
        self.questions.append(question)
        return super().yes_or_no(messages) + (2.0 if CLAUSE in question else 0.0)


def test_whether_the_abstract_states_the_answer_is_read_of_what_is_asked(
    index, embedder, monkeypatch
) -> None:
    """The clause describing the paper repeats its abstract: read with it, the abstract
    seems to state the answer; "does the abstract state the answer?" is asked of the
    question without it (``premise.asked_part``, ``rules.DESCRIPTION_CLAUSE``)."""
    from rag.answer import premise, rules

    odds = {(TESTER, judges.ASK_IS_IT): 2.0, (TESTER, judges.ASK_ANSWERS): judges.ANSWERS - 0.5}
    reply = "It is robust to a small fraction of corrupted samples [1]."

    def ask() -> tuple[Answer, ReadsTheClause]:
        a, reader = judged(index, embedder, odds, reply, ReadsTheClause)
        return a.ask(CLAUSED), reader  # type: ignore[return-value]

    answer, reader = ask()
    assert answer.coverage == "unstated", answer.text
    assert answer.text.startswith("The abstract does not say"), answer.text
    asks = zip(reader.questions, reader.asked, strict=True)
    asked = [q for q, (_, what) in asks if what == judges.ASK_ANSWERS]
    assert asked == ["What learning rate is used by the tester?"]
    # the clause read too (the rule off): the abstract is taken to state it
    monkeypatch.setattr(premise, "_CLAUSE", premise.re.compile(rules.NEVER))
    answer, _ = ask()
    assert answer.coverage == "answered", answer.text


class ReadsTheDetail(Reader):
    """A reader that, like the local model, reads a paper as not the one a question is about
    when the question asks a detail its abstract lacks ("learning rate"); it records the
    questions it is asked whether the paper is the one."""

    def __init__(self, odds: dict[tuple[str, str], float]) -> None:
        super().__init__(odds)
        self.questions: list[str] = []

    def yes_or_no(self, messages: list[dict[str, str]]) -> float:
        user = messages[-1]["content"]
        question = user.split("Question: ")[-1].split("\n")[0]
        is_it = judges.ASK_IS_IT in user
        if is_it:
            self.questions.append(question)
        return super().yes_or_no(messages) - (3.0 if is_it and "learning rate" in question else 0)


def test_whether_a_paper_is_the_one_described_is_read_of_what_the_question_says_of_it(
    index, embedder, monkeypatch
) -> None:
    """A question asking a detail the abstract lacks of the paper a clause describes: asked
    whole, "is this the paper?" follows the detail and the answer would say no indexed paper
    does that, of an indexed paper. It is asked again of what the clause says of the paper
    (``premise.description``, ``rules.IS_IT_OF_DESCRIPTION``) when the whole question reads
    below the bar: the abstract does not say."""
    from rag.answer import rules

    odds = {(TESTER, judges.ASK_IS_IT): 2.0, (TESTER, judges.ASK_ANSWERS): judges.ANSWERS - 0.5}

    def ask() -> tuple[Answer, ReadsTheDetail]:
        a, reader = judged(index, embedder, odds, "It uses a rate of 0.1 [1].", ReadsTheDetail)
        return a.ask(CLAUSED), reader  # type: ignore[return-value]

    answer, reader = ask()
    assert answer.coverage == "unstated", answer.text
    assert answer.text.startswith("The abstract does not say"), answer.text
    assert "0.1" not in answer.text
    # read whole first; below the bar, of what the clause says of the paper
    assert reader.questions == [CLAUSED, f"Which paper is about the tester {CLAUSE}?"]
    # read whole only (the rule off): the tester is taken for another paper than the one asked of
    monkeypatch.setattr(rules, "IS_IT_OF_DESCRIPTION", False)
    answer, reader = ask()
    assert answer.coverage == "no_paper", answer.text
    assert set(reader.questions) == {CLAUSED}


def test_the_words_an_unstated_answer_names_are_those_of_what_is_asked(index, embedder) -> None:
    """The word checks' lead names the words of what is asked that the abstract lacks, not
    those of the clause describing the paper, which its abstract says in other words."""
    a = make_assistant(index, embedder, "extractive")
    question = (
        "What learning rate is used by the tester that is built on the Huber loss of tallies?"
    )
    lead = a.ask(question).text.split("\n", 1)[0]
    assert lead.startswith("The abstract does not say"), lead
    assert '"learning", "rate"' in lead and "tallies" not in lead, lead


SAYS = judges.ASK_SAYS.split("{", 1)[0]
# every term but "label" and "noise" is in the tester's abstract: the word checks hold it
NEAR_MISS = (
    "Which paper introduces a uniformity tester on the Huber loss of the empirical counts with "
    "optimal sample complexity under label noise?"
)


def test_a_which_paper_question_needs_its_paper_held_to_be_it_more_surely(index, embedder) -> None:
    """ "Which paper ...?" presumes one does all it says: the paper held to be it must reach
    ``IS_IT_FIND``, where a question asked of one paper needs ``IS_IT``."""
    assert judges.IS_IT < judges.IS_IT_FIND
    between = (judges.IS_IT + judges.IS_IT_FIND) / 2
    odds = {(TESTER, judges.ASK_IS_IT): between, (TESTER, judges.ASK_ANSWERS): 2.0}
    a, _ = judged(index, embedder, odds, "The tester uses the Huber loss of the counts [1].")
    assert a.ask(DESCRIBED).coverage == "no_paper"
    a, _ = judged(index, embedder, odds, "It is robust to a small fraction of them [1].")
    assert a.ask(ASKED).coverage == "answered"
    odds[(TESTER, judges.ASK_IS_IT)] = judges.IS_IT_FIND
    a, _ = judged(index, embedder, odds, "The tester uses the Huber loss of the counts [1].")
    assert a.ask(DESCRIBED).coverage == "answered"


def test_a_phrase_of_a_which_paper_question_its_paper_lacks_is_read_by_the_model(
    index, embedder
) -> None:
    """ "... under label noise": two words in a row the abstract has none of. The model is
    asked whether the abstract says it otherwise; below ``SAYS``, no indexed paper does
    that, and the answer names the phrase."""
    odds = {(TESTER, judges.ASK_IS_IT): 3.0, (TESTER, SAYS): judges.SAYS - 0.1}
    a, reader = judged(index, embedder, odds, "The tester uses the Huber loss [1].")
    answer = a.ask(NEAR_MISS)
    assert answer.coverage == "no_paper", answer.text
    assert answer.text.startswith("No indexed paper does that"), answer.text
    assert '"label noise"' in answer.text.split("\n", 1)[0]
    assert (TESTER, SAYS) in reader.asked
    # the abstract held to say it in other words: answered
    odds[(TESTER, SAYS)] = judges.SAYS
    a, _ = judged(index, embedder, odds, "The tester uses the Huber loss of the counts [1].")
    assert a.ask(NEAR_MISS).coverage == "answered"
    # a question every word of which the abstract has asks no such thing
    a, reader = judged(index, embedder, odds, "The tester uses the Huber loss of the counts [1].")
    odds[(TESTER, judges.ASK_IS_IT)] = 3.0
    a.ask(DESCRIBED)
    assert (TESTER, SAYS) not in reader.asked


def test_only_the_local_model_judges_premises_and_the_setting_turns_it_off(index, embedder) -> None:
    a, reader = judged(index, embedder, {}, "The tester uses the Huber loss of the counts [1].")
    assert a.ask(DESCRIBED, llm="extractive").coverage == "answered"
    assert reader.asked == []
    off, reader = judged(index, embedder, {}, "The tester uses the Huber loss of the counts [1].",
                         **{"checks.judge_premises": False})  # fmt: skip
    assert off.ask(DESCRIBED).coverage == "answered"
    assert reader.asked == []


def test_a_comparison_is_not_judged(index, embedder) -> None:
    a, reader = judged(index, embedder, {}, "One tests uniformity [1]; one plays bandits [2].")
    a.ask("How do the Huber-loss uniformity tester and the streaming bandits paper differ?")
    assert [ask for _, ask in reader.asked if ask != judges.ASK_SUPPORTS] == []


HELD = {(TESTER, judges.ASK_IS_IT): 2.0, (TESTER, judges.ASK_ANSWERS): 2.0}
# the abstract: "robust to a small fraction of corrupted samples"; three words it lacks
REWORDED = "The tester withstands a small share of contaminated samples [1]."


def test_a_statement_removed_for_its_wording_stands_when_the_model_reads_it_as_supported(
    index, embedder
) -> None:
    odds = {**HELD, (TESTER, judges.ASK_SUPPORTS): judges.SUPPORTS}
    a, reader = judged(index, embedder, odds, REWORDED)
    answer = a.ask(ASKED)
    assert "withstands a small share of contaminated samples [1]" in answer.text, answer.text
    assert [c.paper.paper_id for c in answer.citations] == ["made-up-tester"]
    assert answer.removed == ()
    # read below the bar: removed, and the abstract's own sentences answer instead
    odds[(TESTER, judges.ASK_SUPPORTS)] = judges.SUPPORTS - 0.1
    a, reader = judged(index, embedder, odds, REWORDED)
    answer = a.ask(ASKED)
    assert "withstands" not in answer.text
    assert [r.statement for r in answer.removed] == [REWORDED.removesuffix(" [1].") + "."]
    assert (TESTER, judges.ASK_SUPPORTS) in reader.asked
    # the setting off: the word check alone, nothing read
    off, reader = judged(index, embedder, {**odds, (TESTER, judges.ASK_SUPPORTS): 9.0},
                         REWORDED, **{"checks.judge_statements": False})  # fmt: skip
    assert "withstands" not in off.ask(ASKED).text
    assert (TESTER, judges.ASK_SUPPORTS) not in reader.asked


@pytest.mark.parametrize(
    "reply",
    [
        "The tester withstands 30% contaminated samples [1].",  # a number it does not give
        "The tester withstands corrupted samples by discarding outliers [1].",  # question's word
        "This is stated in the abstract [1].",  # about no sentence of it
    ],
)
def test_a_statement_removed_for_a_number_or_the_questions_words_is_never_read(
    index, embedder, reply
) -> None:
    """However sure the model is, what the check found wrong stays removed: a number the
    abstract does not give, a word of the question's the abstract lacks (the question may
    presume what the paper does not do), a statement near no sentence of the abstract."""
    odds = {**HELD, (TESTER, judges.ASK_SUPPORTS): 9.0}
    a, reader = judged(index, embedder, odds, reply)
    answer = a.ask("How does the Huber-loss uniformity tester handle outliers?")
    assert reply.split(" [")[0] not in answer.text, answer.text
    assert (TESTER, judges.ASK_SUPPORTS) not in reader.asked


@pytest.mark.slow
@pytest.mark.usefixtures("local_llm_file")
def test_the_local_model_refuses_a_described_paper_whose_words_one_abstract_holds(index, embedder):
    """The real model: a question describing a paper the index does not hold, most of whose
    words one abstract has (the word checks answer it from that abstract), is refused; a
    question about a paper the index holds is answered."""
    question = (
        "What bounds does the paper on non-stationary strategies for general-sum cooperative "
        "Markov games prove?"
    )
    words_only = make_assistant(index, embedder, "local", **{"checks.judge_premises": False})
    assert words_only.ask(question).coverage == "answered"
    a = make_assistant(index, embedder, "local")
    absent = a.ask(question)
    assert absent.text.startswith("No indexed paper does that"), absent.text
    held = a.ask("What F1 does the Bayesian changepoint detector for sensor time series reach?")
    assert held.coverage == "answered", held.text
    assert "94.1%" in held.text


@pytest.mark.slow
@pytest.mark.usefixtures("local_llm_file")
def test_the_local_model_keeps_a_true_rewording_and_not_a_false_one(index, embedder) -> None:
    """The real model reads statements the word check removed for their wording: "a small
    share of contaminated samples" (the abstract: "a small fraction of corrupted samples")
    stands; "a large share" does not."""
    model = make_assistant(index, embedder, "local").generator("local").llm  # type: ignore[attr-defined]

    def asked(reply: str) -> Answer:
        writer = ScriptedGenerator(reply)
        writer.llm = model
        return make_assistant(index, embedder, "local", generators={"local": writer}).ask(ASKED)

    true = asked(REWORDED)
    assert "withstands a small share of contaminated samples [1]" in true.text, true.text
    false = asked(REWORDED.replace("small", "large"))
    assert "large share" not in false.text, false.text
    assert any("large share" in r.statement for r in false.removed)


# the question joins two asks; the model's answer (scripted) answers the first only
TWO_ASKS = (
    "What does the Huber-loss uniformity tester do about corrupted samples, and on what data "
    "are its experiments run?"
)


def test_the_ask_an_answer_leaves_out_is_answered_in_its_abstracts_words(
    index, embedder, monkeypatch
) -> None:
    odds = {(TESTER, judges.ASK_IS_IT): 2.0, (TESTER, judges.ASK_ANSWERS): 2.0}
    reply = "The tester is robust to a small fraction of corrupted samples [1]."
    a, _ = judged(index, embedder, odds, reply)
    answer = a.ask(TWO_ASKS)
    assert answer.coverage == "answered", answer.text
    assert "Experiments on synthetic data confirm the theory [1]" in answer.text
    # the ask the model answered is not quoted again
    assert answer.text.count("corrupted samples") == 1, answer.text
    # one ask: the model's answer alone
    one = a.ask("What does the Huber-loss uniformity tester do about corrupted samples?")
    assert "synthetic" not in one.text, one.text
    # the rule off: the same question is read as one ask
    monkeypatch.setattr(premises, "_JOINED", re.compile(rules.NEVER))
    assert "synthetic" not in a.ask(TWO_ASKS).text


def test_a_sentence_answering_both_asks_follows_an_answer_that_says_half_of_it(
    index, embedder, monkeypatch
) -> None:
    title = next(p["title"] for p in PAPERS if p["id"] == "made-up-changepoint")
    odds = {(title, judges.ASK_IS_IT): 2.0, (title, judges.ASK_ANSWERS): 2.0}
    reply = "The changepoint method is ahead of kernel and likelihood-ratio baselines [1]."
    a, _ = judged(index, embedder, odds, reply)
    question = "What is the Bayesian changepoint method ahead of, and what F1 does it reach?"
    answer = a.ask(question)
    assert answer.text.startswith(reply), answer.text
    # the statement rests on the sentence that also gives the F1 the answer does not show
    assert "94.1% F1 on three industrial datasets" in answer.text, answer.text
    monkeypatch.setattr(rules, "ASK_HOLDS_MORE", False)
    assert "94.1%" not in a.ask(question).text


def test_which_members_of_a_counted_collection_named_nowhere_is_not_stated(
    tmp_path, embedder, monkeypatch
) -> None:
    survey = (
        "We describe the impact of chronic back pain on daily life. In total 4100 adults and "
        "900 family doctors in six Nordic countries were interviewed by telephone. Most "
        "adults with pain had stopped working."
    )
    named = survey.replace("six Nordic countries", "six Nordic countries (Denmark, Norway, "
                           "Sweden, Finland, Iceland and Greenland)")  # fmt: skip
    question = "Which six Nordic countries took part in the telephone survey of back pain?"
    answers = {}
    for name, text in (("counted", survey), ("named", named)):
        source = tmp_path / f"{name}.jsonl"
        paper = {"id": name, "title": "Back pain in the Nordic countries", "abstract": text}
        source.write_text(json.dumps(paper) + "\n", encoding="utf-8")
        a = make_assistant(tmp_path / f"index-{name}", embedder)
        a.ingest([source])
        answers[name] = a
    counted = answers["counted"].ask(question)
    assert counted.text.startswith("The abstract does not say"), counted.text
    assert "counts them but names none" in counted.text
    assert not answers["named"].ask(question).text.startswith("The abstract does not say")
    monkeypatch.setattr(rules, "COUNTED_NAMES_NONE", False)
    assert "names none" not in answers["counted"].ask(question).text
