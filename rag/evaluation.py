"""The parts of the pipeline that ``eval/`` and ``bench/`` measure one at a time.

Everything a user needs is in ``rag`` itself; these names are for the evaluation and the
benchmarks, which score a layer on its own (the fusion's candidates, the statement check,
the verifier, the reranker's passages, ...). They follow the code they measure and may
change with it.
"""

from __future__ import annotations

from .answer import answering, handlers, judge, lists, support, topics, trends
from .answer.answering import ANSWER_RULES, SYSTEM_PROMPT, score_hits
from .answer.llm import local_llm, stream_chat
from .answer.question import parse_filters
from .answer.support import (
    GENERIC_STEMS,
    about_earlier_work,
    method_name,
    names_in,
    numbers_in,
    plain,
    split_statements,
)
from .answer.trends import venues_topic
from .answer.verifier import Verifier, windows
from .crossencoder import MODELS, CrossEncoder, file_sha256
from .index.embedder import Embedder
from .index.lexical import tokenize
from .index.ranking import FEATURES, MODEL, FusionModel, bundled_model
from .ingest.pipeline import read_sources
from .ingest.readers import read_papers
from .models import embedder_path, local_llm_path
from .retrieve import rerank
from .retrieve.fusion import Candidates, FirstStage, by_score, candidates, fuse_scores
from .retrieve.rerank import passage
from .retrieve.search import Filters, dense_top
from .text.chunking import chunk_paper, split_sentences
from .text.instructions import instructs

__all__ = [
    "ANSWER_RULES",
    "FEATURES",
    "GENERIC_STEMS",
    "MODEL",
    "MODELS",
    "SYSTEM_PROMPT",
    "Candidates",
    "CrossEncoder",
    "Embedder",
    "Filters",
    "FirstStage",
    "FusionModel",
    "Verifier",
    "about_earlier_work",
    "answering",
    "bundled_model",
    "by_score",
    "candidates",
    "chunk_paper",
    "dense_top",
    "embedder_path",
    "file_sha256",
    "fuse_scores",
    "handlers",
    "instructs",
    "judge",
    "lists",
    "local_llm",
    "local_llm_path",
    "method_name",
    "names_in",
    "numbers_in",
    "parse_filters",
    "passage",
    "plain",
    "read_papers",
    "read_sources",
    "rerank",
    "score_hits",
    "split_sentences",
    "split_statements",
    "stream_chat",
    "support",
    "tokenize",
    "topics",
    "trends",
    "venues_topic",
    "windows",
]
