"""The index as a llama-index retriever, for use inside llama-index pipelines.

    retriever = Assistant.open().as_retriever(k=5, venue="ICML")
    engine = RetrieverQueryEngine.from_args(retriever, llm=my_llm)

Each hit becomes a ``NodeWithScore``: the paper's abstract as the node's text, its id as the
node's id, the fused score, and the paper's fields as metadata.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from llama_index.core.retrievers import BaseRetriever
from llama_index.core.schema import NodeWithScore, QueryBundle, TextNode

from .types import Hit

if TYPE_CHECKING:
    from .assistant import Assistant


class PaperRetriever(BaseRetriever):
    """``Assistant.search`` behind llama-index's ``BaseRetriever``."""

    def __init__(self, assistant: Assistant, k: int | None = None, **filters: Any) -> None:
        super().__init__()
        self.assistant = assistant
        self.k = k
        self.filters = filters

    def _retrieve(self, query_bundle: QueryBundle) -> list[NodeWithScore]:
        hits = self.assistant.search(query_bundle.query_str, self.k, **self.filters)
        return [node_of(hit) for hit in hits]


def node_of(hit: Hit) -> NodeWithScore:
    """A hit as a scored node: the abstract, with the paper's fields as metadata."""
    p = hit.paper
    metadata: dict[str, Any] = {
        "paper_id": p.paper_id,
        "title": p.label,
        "venue": p.venue,
        "year": p.year,
        "authors": list(p.authors),
        "url": p.url,
        "keywords": list(p.keywords),
        "evidence": list(hit.evidence),
    }
    # the model reads title and venue beside the abstract; the rest is for the caller
    hidden = ["paper_id", "authors", "url", "keywords", "evidence"]
    node = TextNode(
        id_=p.paper_id,
        text=p.abstract,
        metadata=metadata,
        excluded_llm_metadata_keys=hidden,
        excluded_embed_metadata_keys=list(metadata),
    )
    return NodeWithScore(node=node, score=hit.score)
