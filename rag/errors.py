"""Errors raised by the assistant.

Every error the library raises derives from ``RagError``; its message says what to do.
Only the CLI and the web UI translate them (exit code and one line, or ``gr.Error``).

    RagError
    ├── ConfigError          settings that cannot work (bad value, missing model file)
    ├── InputError           a source file or record that cannot be ingested
    ├── IndexError_          no index, an empty one, or one built with another embedder
    │   ├── NoIndexError
    │   ├── EmbedderMismatchError
    │   └── StoreError       Chroma could not read or write it (a full disk, a damaged file)
    └── LLMError             the language model could not answer
        ├── LLMUnavailableError   endpoint unreachable or model file missing
        └── LLMAuthError          endpoint refused the credentials
"""

from __future__ import annotations


class RagError(Exception):
    """Base of every error this package raises."""


class ConfigError(RagError):
    """A setting that cannot work."""


class InputError(RagError):
    """A source file or record that cannot be ingested.

    ``where`` names the file (and line or record) so the message can point at it.
    """

    def __init__(self, message: str, where: str = "") -> None:
        self.where = where
        super().__init__(f"{where}: {message}" if where else message)


class IndexError_(RagError):  # noqa: N801 - the builtin IndexError is taken
    """The index cannot be used as it is."""


class NoIndexError(IndexError_):
    """There is no index, or it holds no papers."""


class EmbedderMismatchError(IndexError_):
    """The index was built with another embedder or chunking."""


class StoreError(IndexError_):
    """Chroma could not read or write the index (a full disk, a damaged file)."""


class LLMError(RagError):
    """The language model could not answer."""


class LLMUnavailableError(LLMError):
    """The endpoint is unreachable or the model file is missing."""


class LLMAuthError(LLMError):
    """The endpoint refused the credentials."""
