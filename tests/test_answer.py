"""Answers from the bundled corpus: citations checked, refusals, filters and follow-ups."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from rag import Answer, Assistant

from .conftest import make_assistant


class ScriptedLLM:
    """A llama-index LLM that replies with fixed text, streamed word by word.

    It implements the same ``stream_chat`` contract as the real backends, for the cases a
    real model will not produce on demand (a bogus citation, an explicit "cannot answer").
    """

    def __init__(self, reply: str) -> None:
        from llama_index.core.llms import MockLLM

        self.reply = reply
        self.prompts: list[str] = []
        self._mock = MockLLM()

    def stream_chat(self, messages: Sequence[Any], **kwargs: Any) -> Iterator[Any]:
        from llama_index.core.llms import ChatMessage, ChatResponse

        self.prompts.append("\n".join(m.content or "" for m in messages))
        text = ""
        for word in self.reply.split(" "):
            piece = word if not text else " " + word
            text += piece
            yield ChatResponse(message=ChatMessage(role="assistant", content=text), delta=piece)


def scripted(bundled_index, embedder, reply: str) -> tuple[Assistant, ScriptedLLM]:
    llm = ScriptedLLM(reply)
    a = make_assistant(bundled_index, embedder, backend="local")
    a._llms["local"] = llm
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
    assert "[9]" not in answer.text and answer.removed_citations == 1
    assert [c.number for c in answer.citations] == [1]
    assert answer.citations[0].paper.title.startswith("RLER")
    assert "6.2" in answer.citations[0].quote
    assert "[1] RLER" in llm.prompts[0]  # sources are numbered in code, in the prompt


def test_markers_are_renumbered_in_order_of_use(bundled_index, embedder) -> None:
    a, _ = scripted(bundled_index, embedder, "Both study model merging [2], [1].")
    answer = a.ask("Which papers are about model merging?")
    assert "merging [1], [2]." in answer.text  # [2] came first, so it is now [1]
    assert len(answer.citations) == 2


def test_uncited_claims_are_flagged_not_silently_kept(bundled_index, embedder) -> None:
    reply = (
        "RLER improves by 6.2% over the best RLIR baseline [1]. "
        "Bananas ripen faster in paper bags at room temperature."
    )
    a, _ = scripted(bundled_index, embedder, reply)
    answer = a.ask("How much does RLER improve over the best RLIR baseline?")
    assert any("Bananas" in s for s in answer.unsupported_sentences)


def test_out_of_corpus_question_is_refused_without_calling_the_llm(bundled_index, embedder) -> None:
    a, llm = scripted(bundled_index, embedder, "should never be said [1]")
    for question in ["How do I bake sourdough bread?", "What is the capital of France?"]:
        answer = a.ask(question)
        assert not answer.grounded and answer.citations == ()
        assert "do not cover" in answer.text
    assert llm.prompts == []


def test_llm_saying_it_cannot_answer_is_a_refusal(bundled_index, embedder) -> None:
    a, _ = scripted(bundled_index, embedder, "The sources do not answer this question.")
    answer = a.ask("Which papers are about model merging?")
    assert not answer.grounded and answer.citations == ()


def test_stream_yields_pieces_then_the_checked_answer(bundled_index, embedder) -> None:
    a, _ = scripted(bundled_index, embedder, "RLER improves by 6.2% [1] and [7].")
    events = list(a.stream("How much does RLER improve over the best RLIR baseline?"))
    pieces, final = events[:-1], events[-1]
    assert len(pieces) > 3 and all(isinstance(p, str) for p in pieces)
    assert "".join(pieces) == "RLER improves by 6.2% [1] and [7]."
    assert isinstance(final, Answer) and final.removed_citations == 1


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
