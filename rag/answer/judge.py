"""Whether a paper is one a question asks for, as the local model reads its abstract.

Five things are asked of one abstract, each answered by the model's log-odds of "Yes" over
"No" as its reply's first token: is this paper one of those a list question asks for
(``member``); is it the paper a question describes (``is_it``); does its abstract state the
answer to the question (``answers``); does it say a phrase of the question, in any words
(``says``); does it support a statement of an answer (``supports``).

A list question ("Which papers study recovering hidden groups of vertices in random
graphs?") is often put in other words than its papers' abstracts ("community recovery in
stochastic block models"), and a topic no indexed paper covers sits as close to its nearest
abstracts, by cosine and by words, as a covered topic does. The local model tells them apart
far better: asked "Is this paper one of the papers the request asks for?" of each of a
list's closest candidates, its log-odds of "Yes" over "No" ranks members first (AUC 0.95 on
the dev corpora's labelled candidates, where the closest sentence's cosine gives 0.83) and
separates a list some paper answers from a topic none covers by its best candidate (AUC
0.99, the cosine 0.78). ``bench/list_judge.py`` measures it; docs/lists.md has the figures.

A question asked of one paper is judged the same way (``answering.judged_gap``): one that
describes its paper ("What bounds does the paper on non-stationary strategies for general-sum
cooperative stochastic games prove?", of an index holding a zero-sum one) is answered "No
indexed paper does that" when the model holds none of its closest sources to be it, where
the word checks found its words spread over one abstract (a source read below the bar is
read again of what a clause of the question says of its paper, ``premise.description``:
read whole, the reading follows the detail asked too); and "The abstract does not say"
when it holds the abstract not to state the answer, asked of what the question asks: a
clause describing the paper ("... of the network that applies first-order perturbation theory
to ...") repeats its abstract and draws a "Yes" (``premise.asked_part``); where the word
checks found a third of the question's words missing from that abstract (and no name), it
is answered only when the model holds the abstract to state the answer more surely
(``ANSWERS_WORDS``). A question asking which paper does something presumes one does all of
it: the paper held to be it must reach a higher bar, and a phrase of the question that
abstract has none of the words of ("... as features for semantic role labeling?", of a paper
that uses its embeddings for other tasks) must be one the model reads it to say otherwise.
``bench/premise_judge.py`` measures it (``--find``: near misses).

A statement of the model's own answer that the word check removed for its wording alone
(no sentence close enough, or more words the abstract lacks than a paraphrase may use:
"With little parameter tuning, the kernel graph CNN beats strong baselines on 7 of 10
benchmark datasets", of an abstract that says "outperforms") is read against the abstract it
cites, and stands when the model holds the abstract to support it (``Checker.reread``). A
number, a name, an attribution or a word of the question's that the abstract lacks is never
read again: the check's removal stands. A statement the word check keeps, but one of whose
parts says words that the sentence closest to it lacks and another sentence has ("The
estimates were calibrated against crop yield", of an abstract that calibrates against
samples and records crop yield apart), is held back and read the same way (``JOINED``).

The model only judges: it writes nothing the answer shows beyond its own statements, each
checked. A listed paper is still shown with a sentence of its own abstract that the
statement check keeps.
"""

from __future__ import annotations

from typing import Any, Protocol

from ..types import Paper
from . import rules

SYSTEM = "You judge whether a paper matches a request, from its abstract alone."
ASK = "Is this paper one of the papers the request asks for? Answer Yes or No."
ASK_IS_IT = "Is this paper the one the question is about? Answer Yes or No."
ASK_ANSWERS = "Does the abstract state the answer to the question? Answer Yes or No."
ASK_SAYS = "Does the abstract mention {phrase}, or say the same in other words? Answer Yes or No."
ASK_SUPPORTS = "Does the abstract support the statement? Answer Yes or No."
ABSTRACT_CHARS = 4000  # an abstract longer than this is read up to here

# How many of a list's candidates, closest first, the model reads; a list is answered
# when the best of them reaches ``FIRST`` and holds every one reaching ``MEMBER``
JUDGED = rules.JUDGED
FIRST = rules.JUDGE_FIRST
MEMBER = rules.JUDGE_MEMBER
# A question describing its paper has this many of its closest sources read, none of which
# is the one described below ``IS_IT``; the abstract of the one it asks about does not state
# the answer below ``ANSWERS``
READ = rules.JUDGE_READ
IS_IT = rules.JUDGE_IS_IT
ANSWERS = rules.JUDGE_ANSWERS
# ... and where the word checks found it to lack a third of the question's words, it states
# the answer in other words at ``ANSWERS_WORDS`` or more
ANSWERS_WORDS = rules.JUDGE_ANSWERS_WORDS
# ... and where nothing the model wrote of its answer stood the check, at this or more
ANSWERS_UNCHECKED = rules.JUDGE_ANSWERS_UNCHECKED
# a question asking which paper does something: the one held to be it reaches ``IS_IT_FIND``,
# and each run of its words that abstract has none of is said there at ``SAYS`` or more
IS_IT_FIND = rules.JUDGE_IS_IT_FIND
SAYS = rules.JUDGE_SAYS
# a statement of the model's answer removed for its wording alone stands when its abstract
# is read to support it at this or more (``answering.Checker.reread``)
SUPPORTS = rules.JUDGE_SUPPORTS
# ... and one the word check kept but held back for joining words of two sentences, at this
JOINED = rules.JUDGE_JOINED


def messages(
    question: str, paper: Paper, ask: str = ASK, label: str = "Request"
) -> list[dict[str, str]]:
    """What the model reads: the paper's title and abstract, the request, the ask."""
    abstract = paper.abstract[:ABSTRACT_CHARS]
    user = f"Title: {paper.title}\nAbstract: {abstract}\n\n{label}: {question}\n{ask}"
    return [{"role": "system", "content": SYSTEM}, {"role": "user", "content": user}]


class Judge(Protocol):
    def member(self, question: str, paper: Paper) -> float:
        """Log-odds that ``paper`` is one ``question`` asks for (above 0: more likely)."""
        ...

    def is_it(self, question: str, paper: Paper) -> float:
        """Log-odds that ``paper`` is the one ``question`` is about."""
        ...

    def answers(self, question: str, paper: Paper) -> float:
        """Log-odds that ``paper``'s abstract states the answer to ``question``."""
        ...

    def says(self, question: str, paper: Paper, phrase: str) -> float:
        """Log-odds that ``paper``'s abstract says ``phrase`` of ``question``, in any words."""
        ...

    def supports(self, statement: str, paper: Paper) -> float:
        """Log-odds that ``paper``'s abstract supports ``statement``."""
        ...


class ModelJudge:
    """The judgement of a chat model that can read its log-odds of "Yes" (the local GGUF
    model: ``LocalLlamaCpp.yes_or_no``)."""

    def __init__(self, llm: Any) -> None:
        self.llm = llm

    def member(self, question: str, paper: Paper) -> float:
        return float(self.llm.yes_or_no(messages(question, paper)))

    def is_it(self, question: str, paper: Paper) -> float:
        return float(self.llm.yes_or_no(messages(question, paper, ASK_IS_IT, "Question")))

    def answers(self, question: str, paper: Paper) -> float:
        return float(self.llm.yes_or_no(messages(question, paper, ASK_ANSWERS, "Question")))

    def says(self, question: str, paper: Paper, phrase: str) -> float:
        ask = ASK_SAYS.format(phrase=phrase)
        return float(self.llm.yes_or_no(messages(question, paper, ask, "Question")))

    def supports(self, statement: str, paper: Paper) -> float:
        return float(self.llm.yes_or_no(messages(statement, paper, ASK_SUPPORTS, "Statement")))


class Remembered:
    """A judge that reads each ask of a paper once: what one answer's premise check read
    ("is it the paper?", "does its abstract state the answer?") is read again by a later
    check of the same answer at no cost. ``kept``: readings taken before, keyed by (text,
    paper id, what is asked); with no ``judge``, every reading asked for must be kept."""

    def __init__(self, judge: Judge | None, kept: dict[tuple[str, str, str], float] | None = None):
        self.judge = judge
        self.kept: dict[tuple[str, str, str], float] = {} if kept is None else kept

    def _once(self, ask: str, text: str, paper: Paper, *more: str) -> float:
        key = (text, paper.paper_id, " ".join((ask, *more)))
        if key not in self.kept:
            assert self.judge is not None, f"no reading kept for {key}"
            self.kept[key] = getattr(self.judge, ask)(text, paper, *more)
        return self.kept[key]

    def member(self, question: str, paper: Paper) -> float:
        return self._once("member", question, paper)

    def is_it(self, question: str, paper: Paper) -> float:
        return self._once("is_it", question, paper)

    def answers(self, question: str, paper: Paper) -> float:
        return self._once("answers", question, paper)

    def says(self, question: str, paper: Paper, phrase: str) -> float:
        return self._once("says", question, paper, phrase)

    def supports(self, statement: str, paper: Paper) -> float:
        return self._once("supports", statement, paper)


def judged(judge: Judge, question: str, papers: list[Paper]) -> list[tuple[Paper, float]]:
    """The papers of ``papers`` (closest first) the judge holds to be ones ``question`` asks
    for, with their log-odds: none unless the best reaches ``FIRST``."""
    scores = [(p, judge.member(question, p)) for p in papers[:JUDGED]]
    if max((s for _, s in scores), default=float("-inf")) < FIRST:
        return []
    return [(p, s) for p, s in scores if s >= MEMBER]
