"""Ask questions about a conference's accepted papers; answers cite the papers they use.

from rag import Assistant
a = Assistant.open(index_dir="index_store", llm="extractive")
a.ingest(["papers.jsonl"])
answer = a.ask("Which papers tackle model merging?")
"""

from . import _offline

_offline.apply()

from .answer.lists import ListedPaper, PaperList  # noqa: E402
from .answer.topics import Topic  # noqa: E402
from .assistant import Assistant, IndexStats  # noqa: E402
from .errors import (  # noqa: E402
    ConfigError,
    EmbedderMismatchError,
    InputError,
    LLMAuthError,
    LLMError,
    LLMUnavailableError,
    NoIndexError,
    RagError,
    StoreError,
)
from .ingest.pipeline import IngestReport  # noqa: E402
from .retrieve.search import Filters  # noqa: E402
from .settings import Settings, get_settings  # noqa: E402
from .types import Answer, Citation, Hit, Paper, Removed, Step  # noqa: E402

__all__ = [
    "Answer",
    "Assistant",
    "Citation",
    "ConfigError",
    "EmbedderMismatchError",
    "Filters",
    "Hit",
    "IndexStats",
    "IngestReport",
    "InputError",
    "LLMAuthError",
    "LLMError",
    "LLMUnavailableError",
    "ListedPaper",
    "NoIndexError",
    "Paper",
    "PaperList",
    "RagError",
    "Removed",
    "Settings",
    "Step",
    "StoreError",
    "Topic",
    "get_settings",
]
