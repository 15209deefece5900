"""The index inside llama-index: ``Assistant.as_retriever`` is a ``BaseRetriever`` whose
nodes carry the papers, and a llama-index query engine answers from them."""

from __future__ import annotations

from llama_index.core import QueryBundle
from llama_index.core.llms import MockLLM
from llama_index.core.query_engine import RetrieverQueryEngine
from llama_index.core.retrievers import BaseRetriever

from rag import Assistant


def test_the_retriever_returns_the_papers_search_finds(bundled: Assistant) -> None:
    retriever = bundled.as_retriever(k=3, venue="ICML", year=2026)
    assert isinstance(retriever, BaseRetriever)
    nodes = retriever.retrieve(QueryBundle("Which papers tackle model merging?"))
    hits = bundled.search("Which papers tackle model merging?", 3, venue="ICML", year=2026)
    assert [n.node.node_id for n in nodes] == [h.paper.paper_id for h in hits]
    assert [n.score for n in nodes] == [h.score for h in hits]
    first, paper = nodes[0], hits[0].paper
    assert "OPIC" in first.node.metadata["title"]
    assert first.node.get_content() == paper.abstract
    assert first.node.metadata["venue"] == "ICML" and first.node.metadata["year"] == 2026
    assert first.node.metadata["url"] == paper.url
    assert first.node.metadata["authors"] == list(paper.authors)


def test_the_filters_hold_inside_the_retriever(bundled: Assistant) -> None:
    assert bundled.as_retriever(k=3, venue="NeurIPS").retrieve("model merging") == []


def test_a_query_engine_answers_from_the_retrieved_abstracts(bundled: Assistant) -> None:
    engine = RetrieverQueryEngine.from_args(bundled.as_retriever(k=2), llm=MockLLM())
    response = engine.query("What does the CSR paper report?")
    sources = response.source_nodes
    assert len(sources) == 2 and "CSR" in sources[0].node.metadata["title"]
    # the prompt the model got holds the abstract and the title, not the hidden fields
    prompt_part = sources[0].node.get_content(metadata_mode="llm")
    assert sources[0].node.get_content() in prompt_part and "title: " in prompt_part
    assert "paper_id: " not in prompt_part
    # MockLLM echoes its prompt: the abstracts reached the model through the engine
    assert all(s.node.get_content() in str(response) for s in sources)
