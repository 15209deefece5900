"""The Chroma collection that holds the chunks, embedded or on a Chroma server.

One record per chunk: id ``{paper_id}::{n}``, its embedding, its text as the document, and
the paper's metadata (chunk 0 also carries the abstract). The collection's own metadata
records the embedder, its dimension, runtime and precision and the chunking, and a
``version`` stamp that changes with every write, so readers in other processes know when to
reload. Searching reads the vectors into a snapshot (``rag.index.snapshot``) and never asks
Chroma's approximate index.

The embedded client (a folder) and the HTTP client (``chroma run``, any number of serving
processes) behave the same here: their errors become ``NoIndexError`` (no collection) or
``ConfigError`` (server unreachable, token refused), never a raw ``httpx`` or Chroma error.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
import threading
import uuid
from collections.abc import Callable, Iterator, Sequence
from contextlib import closing, contextmanager
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any, TypeVar
from urllib.parse import urlparse

import numpy as np

from ..errors import (
    ConfigError,
    EmbedderMismatchError,
    IndexError_,
    NoIndexError,
    RagError,
    StoreError,
)
from ..settings import StoreSettings
from ..types import YEARS, Paper

SCHEMA = 1
T = TypeVar("T")
_PEEK_WAIT_S = 2.0  # how long a reader waits for a writer's lock on the SQLite file
WRITING = "writing-"  # prefix of a version stamp set before a write that has not finished
_PAGE = 5000


# What an index from before runtimes were recorded holds: sentence-transformers' vectors.
# The fp32 ONNX export gives the same ones (cosine >= 0.9999, tests/test_embedder.py), so
# such an index is read, and written, with it; int8 differs and is refused.
LEGACY = {"runtime": "sentence-transformers", "precision": "fp32"}
SAME_VECTORS = {("sentence-transformers", "fp32"): ("onnxruntime", "fp32")}


@dataclass(frozen=True)
class Provenance:
    """What the vectors in a collection were made with."""

    embedder: str
    dim: int
    chunk_tokens: int
    runtime: str = "onnxruntime"
    precision: str = "fp32"

    def as_metadata(self) -> dict[str, Any]:
        return {
            "embedder": self.embedder,
            "dim": self.dim,
            "chunk_tokens": self.chunk_tokens,
            "runtime": self.runtime,
            "precision": self.precision,
        }

    def mismatch(self, stored: dict[str, Any]) -> tuple[str, Any, Any] | None:
        """The first recorded value (key, recorded, wanted) these vectors cannot be mixed
        with, or None when they can."""
        recorded = {**LEGACY, **stored}
        made_by = (recorded["runtime"], recorded["precision"])
        same = SAME_VECTORS.get(made_by) == (self.runtime, self.precision)
        for key, want in self.as_metadata().items():
            if recorded.get(key) != want and not (same and key in LEGACY):
                return key, recorded.get(key), want
        return None


@dataclass(frozen=True)
class StoredChunk:
    chunk_id: str
    text: str
    meta: dict[str, Any]
    vector: np.ndarray | None = None  # only when asked for


def make_client(settings: StoreSettings) -> Any:
    """A Chroma client: a server when ``chroma_url`` is set, else the folder ``index_dir``."""
    import chromadb
    from chromadb.config import Settings as ChromaSettings

    chroma_settings = ChromaSettings(anonymized_telemetry=False, allow_reset=False)
    if not settings.chroma_url:
        try:
            settings.index_dir.mkdir(parents=True, exist_ok=True)
        except PermissionError as exc:
            raise _read_only(settings.index_dir, exc) from None
        return _embedded_client(str(settings.index_dir), chroma_settings)
    url = urlparse(settings.chroma_url)
    if url.scheme not in ("http", "https") or not url.hostname:
        raise ConfigError(f"Bad Chroma URL {settings.chroma_url!r}; use http://host:port.")
    headers = dict(settings.chroma_headers)
    if settings.chroma_token:
        headers.setdefault("Authorization", f"Bearer {settings.chroma_token.get_secret_value()}")
    import httpx

    timeout = httpx.Timeout(settings.chroma_timeout, connect=min(settings.chroma_timeout, 10.0))
    try:
        # Chroma's client waits forever on a server that accepts and never answers: ask for
        # its heartbeat with a deadline first, then give the client's own session one
        httpx.get(
            f"{settings.chroma_url.rstrip('/')}/api/v2/heartbeat", headers=headers, timeout=timeout
        ).raise_for_status()
        client = chromadb.HttpClient(
            host=url.hostname,
            port=url.port or (443 if url.scheme == "https" else 8000),
            ssl=url.scheme == "https",
            headers=headers,
            settings=chroma_settings,
        )
    except Exception as exc:  # chromadb raises plain exceptions for connection problems
        raise _server_error(settings, exc) from exc
    session = getattr(getattr(client, "_server", None), "_session", None)
    if isinstance(session, httpx.Client):
        session.timeout = timeout
    return client


def _embedded_client(path: str, chroma_settings: Any) -> Any:
    """A client over the folder that reads it afresh.

    Chroma keeps one system per folder in a process, and that system's vector index never
    sees what other processes write to the folder: its queries then miss their chunks or fail
    with "Error finding id". Taking the folder's system out of Chroma's share makes this client
    load it again; clients made before keep theirs until nothing uses it.
    """
    import chromadb
    from chromadb.api.shared_system_client import SharedSystemClient as Shared

    _check_database(Path(path))
    with Shared._refcount_lock:
        Shared._identifier_to_system.pop(path, None)
        Shared._identifier_to_refcount.pop(path, None)
    try:
        return chromadb.PersistentClient(path=path, settings=chroma_settings)
    except Exception as exc:  # chromadb's InternalError carries SQLite's reason in its text
        reason = " ".join(str(exc).split())
        if re.search(r"malformed|not a database|file is encrypted|corrupt", reason, re.I):
            raise _damaged(Path(path), re.sub(r"^.*\(code: \d+\)\s*", "", reason)) from None
        if _READ_ONLY.search(reason) or isinstance(exc, PermissionError):
            raise _read_only(Path(path), exc) from None
        raise


# SQLite's "attempt to write a readonly database" (code 8), EACCES and EROFS from the disk
_READ_ONLY = re.compile(r"readonly database|read-only file system|permission denied", re.I)


def _read_only(folder: Path, exc: Exception) -> StoreError:
    reason = getattr(exc, "strerror", None) or re.sub(r"^.*\(code: \d+\)\s*", "", str(exc))
    return StoreError(
        f"The index in {folder}/ is read-only here ({reason}). Add papers as a user "
        "who may write to it, or into a copy of the folder; to search it, its owner runs "
        "`rag ingest PATH` once with this version, which writes the snapshot readers use."
    )


_SQLITE_MAGIC = b"SQLite format 3\x00"


def _check_database(folder: Path) -> None:
    """A database file that is there but is no SQLite database (empty, overwritten) is
    damage to report, never a file for Chroma to recreate over the index."""
    db = folder / "chroma.sqlite3"
    try:
        with db.open("rb") as f:
            head = f.read(len(_SQLITE_MAGIC))
    except FileNotFoundError:
        return
    except OSError as exc:
        raise IndexError_(f"Cannot read the index database {db} ({exc.strerror}).") from None
    if not head:
        raise _damaged(folder, "the file is empty")
    if head != _SQLITE_MAGIC:
        raise _damaged(folder, "file is not a database")


def _damaged(folder: Path, reason: str) -> IndexError_:
    return IndexError_(
        f"The index in {folder}/ is damaged ({folder / 'chroma.sqlite3'}: {reason}). Restore "
        "the folder from a copy, or move it aside and index your paper lists again with "
        "`rag ingest PATH`."
    )


def _server_error(settings: StoreSettings, exc: Exception) -> ConfigError:
    """What to do about a failed call to a Chroma server, in one line."""
    text = " ".join(str(exc).split())
    if _is_auth_error(exc) or re.search(r"\b(401|403)\b|Unauthorized|Forbidden", text):
        return ConfigError(
            f"The Chroma server at {settings.chroma_url} refused the request: a missing or "
            "wrong token. Set it with --chroma-token or RAG_STORE__CHROMA_TOKEN."
        )
    return ConfigError(
        f"Cannot reach the Chroma server at {settings.chroma_url} ({text[:160]}). "
        "Start it (`chroma run --path DIR`) or fix --chroma-url."
    )


def _is_auth_error(exc: Exception) -> bool:
    """Refused credentials by class; a plain ``Exception`` from chromadb is told by its text."""
    import httpx
    from chromadb.errors import AuthorizationError, ChromaAuthError

    if isinstance(exc, httpx.HTTPStatusError):
        return exc.response.status_code in (401, 403)
    return isinstance(exc, (AuthorizationError, ChromaAuthError))


_FULL = re.compile(r"disk is full|no space left|quota exceeded|\(code: 13\)", re.IGNORECASE)
_LOW_SPACE = 64 * 2**20  # bytes: less than this free, a failed write is put down to the disk


def _store_error(settings: StoreSettings, exc: Exception) -> StoreError:
    """What to do about a failed read or write, in one line: a full disk, or Chroma's reason."""
    text = " ".join(str(exc).split())[:200]
    where = describe(settings)
    free = None if settings.chroma_url else _free_bytes(settings.index_dir)
    if _FULL.search(text) or (free is not None and free < _LOW_SPACE):
        space = f" ({free / 2**20:.1f} MiB free)" if free is not None else ""
        return StoreError(
            f"The disk that holds the index in {where} is full{space}. Free some space, then "
            "run the same command again: it completes what was cut short."
        )
    if not settings.chroma_url and _READ_ONLY.search(text):
        return _read_only(settings.index_dir, exc)
    return StoreError(
        f"Chroma failed on the index in {where} ({type(exc).__name__}: {text}). Run the "
        "command again; if it fails the same way, rebuild: `rag ingest --rebuild PATH`."
    )


def _free_bytes(folder: Path) -> int | None:
    try:
        return shutil.disk_usage(folder).free
    except OSError:
        return None


def describe(settings: StoreSettings) -> str:
    return settings.chroma_url or f"{settings.index_dir}/"


def paper_metadata(paper: Paper, content_hash: str, source: str, position: int) -> dict[str, Any]:
    """Metadata every chunk of a paper carries (Chroma takes no None values)."""
    meta: dict[str, Any] = {
        "paper_id": paper.paper_id,
        "title": paper.title,
        "title_derived": paper.title_derived,
        "venue": paper.venue,
        "venue_norm": paper.venue.lower(),
        "authors": "; ".join(paper.authors),
        "url": paper.url,
        "keywords": "; ".join(paper.keywords),
        "content_hash": content_hash,
        "source": source,
        "position": position,
    }
    if paper.year is not None:
        meta["year"] = paper.year
    return meta


def chunk_metadata(
    paper: Paper,
    content_hash: str,
    source: str,
    position: int,
    abstract_key: str,
    number: int,
    n_chunks: int,
) -> dict[str, Any]:
    """Metadata of one chunk: its paper's (``paper_metadata``), its place among the paper's
    chunks, and on the first chunk the whole abstract (``paper_from_metadata`` reads it)."""
    meta = paper_metadata(paper, content_hash, source, position)
    meta["abstract_key"] = abstract_key
    meta["chunk"] = number
    meta["n_chunks"] = n_chunks
    if number == 0:
        meta["abstract"] = paper.abstract
    return meta


def paper_from_metadata(meta: dict[str, Any], abstract: str) -> Paper:
    split = lambda s: tuple(p for p in str(s or "").split("; ") if p)  # noqa: E731
    return Paper(
        paper_id=str(meta["paper_id"]),
        title=str(meta.get("title", "")),
        abstract=abstract,
        title_derived=bool(meta.get("title_derived", False)),
        venue=str(meta.get("venue", "")),
        year=_plausible_year(meta.get("year")),
        authors=split(meta.get("authors")),
        url=str(meta.get("url", "")),
        keywords=split(meta.get("keywords")),
    )


def _plausible_year(value: Any) -> int | None:
    """A stored year; none for one no paper has (indexes made before ingest checked years
    may hold 1e+20, which would break every year filter)."""
    try:
        year = int(value)
    except (TypeError, ValueError, OverflowError):
        return None
    return year if year in YEARS else None


class _Connection:
    """A Chroma client, the collection handle got through it, and how many calls use it.

    A folder's connection is replaced when another process writes (``PaperStore._follow``);
    the old one is closed, freeing its copy of the vector index, when its last call ends.
    """

    def __init__(self, client: Any, system: Any = None) -> None:
        self.client = client
        self.system = system  # a folder's own Chroma system, stopped on close
        self.collection: Any | None = None
        self.users = 0

    @classmethod
    def open(cls, settings: StoreSettings) -> _Connection:
        client = make_client(settings)
        return cls(client, None if settings.chroma_url else client._system)

    def close(self) -> None:
        if self.system is not None:
            self.system.stop()


class PaperStore:
    """The chunk collection, with the few operations ingestion and retrieval need."""

    def __init__(self, settings: StoreSettings, client: Any | None = None) -> None:
        self.settings = settings
        # a folder's client is made when first needed: reading a folder that holds no index
        # must not create one; a server's is made now, so a wrong URL is found at once
        self._conn = _Connection(client) if client is not None else None
        if client is None and settings.chroma_url:
            self._conn = _Connection.open(settings)
        self._lock = threading.RLock()
        self._written = False  # since the last version stamp
        self._seen = ""  # the version stamp this store last read or wrote
        self._peeked: dict[str, Any] | None = None  # metadata last read straight from SQLite

    # -- opening ---------------------------------------------------------------------------
    @contextmanager
    def _use(self) -> Iterator[_Connection]:
        """The current connection, kept open until the block ends even if ``_reconnect``
        replaces it meanwhile; Chroma's errors inside the block become this package's."""
        with self._lock:
            conn = self._conn = self._conn or _Connection.open(self.settings)
            conn.users += 1
        try:
            with self._errors(conn):
                yield conn
        finally:
            with self._lock:
                conn.users -= 1
                if conn is not self._conn and not conn.users:
                    conn.close()

    def _reconnect(self) -> None:
        """Use a new connection from now on (see ``_Connection``)."""
        with self._lock:
            old, self._conn = self._conn, _Connection.open(self.settings)
            if old is not None and not old.users:
                old.close()

    @contextmanager
    def _errors(self, conn: _Connection) -> Iterator[None]:
        """Chroma's and httpx's errors, from either client, as this package's errors."""
        try:
            yield
        except NoIndexError:
            raise
        except Exception as exc:
            error = self._translated(exc)
            if error is None:  # not Chroma's, the network's or the disk's: a bug, raised as is
                raise
            if isinstance(error, NoIndexError):
                conn.collection = None
            raise error from exc

    def _translated(self, exc: Exception) -> RagError | None:
        """This package's error for one of Chroma's, httpx's or the disk's, chosen by class
        (chromadb is imported by then: only a Chroma call gets here)."""
        from chromadb.errors import NotFoundError

        if isinstance(exc, NotFoundError):
            return NoIndexError(
                f"No index in {describe(self.settings)}. Run `rag ingest PATH` first."
            )
        if self.settings.chroma_url and _is_transport_error(exc):
            return _server_error(self.settings, exc)
        if _is_chroma_error(exc) or isinstance(exc, OSError):
            return _store_error(self.settings, exc)
        return None

    def _collection(self, conn: _Connection, fresh: bool = False) -> Any:
        """The collection through ``conn``; ``fresh``: as stored now (another process may
        have dropped and re-created it, ``--rebuild``, under a new id)."""
        if fresh or conn.collection is None:
            conn.collection = conn.client.get_collection(self.settings.collection)
        return conn.collection

    def exists(self) -> bool:
        try:
            self.metadata()
            return True
        except NoIndexError:
            return False

    def open_for_write(self, provenance: Provenance) -> None:
        """Create the collection if needed, or check it was built with the same embedder
        (an index that does not record its runtime gets this one's: ``LEGACY``)."""
        try:
            stored = self.check(provenance)
        except NoIndexError:
            meta = {**provenance.as_metadata(), "schema": SCHEMA, "version": uuid.uuid4().hex}
            with self._use() as conn:
                conn.collection = conn.client.get_or_create_collection(
                    self.settings.collection,
                    metadata=meta,
                    configuration={"hnsw": {"space": "cosine"}},
                    embedding_function=None,
                )
        else:
            if stored != {**stored, **provenance.as_metadata()}:
                self._modify({**stored, **provenance.as_metadata()})
        self._written = False

    def check(self, provenance: Provenance, stored: dict[str, Any] | None = None) -> dict[str, Any]:
        """Raise if the collection's vectors (``stored``: its metadata, else read now) were
        made with another embedder, runtime, precision or chunking; return the metadata."""
        stored = self.metadata() if stored is None else stored
        if found := provenance.mismatch(stored):
            key, recorded, wanted = found
            raise EmbedderMismatchError(
                f"The index in {describe(self.settings)} was built with {key}={recorded!r}, "
                f"not {wanted!r}. Rebuild it: `rag ingest --rebuild PATH`."
            )
        return stored

    def metadata(self) -> dict[str, Any]:
        """The collection's metadata as stored now (another process may have changed it)."""
        no_folder = not self.settings.chroma_url and not self._folder_has_index()
        if self._conn is None and no_folder:  # reading must not create an index
            raise NoIndexError(
                f"No index in {describe(self.settings)}. Run `rag ingest PATH` first."
            )
        peeked = None if self._conn is not None or no_folder else self._peek_metadata()
        if peeked is None and self._conn is None and self._peeked is not None:
            # a writer holds the file's lock: the index as last read, not a Chroma client
            # (which would load the whole vector index into this reading process)
            peeked = self._peeked
        if peeked is not None:
            meta = peeked
        else:
            with self._use() as conn:
                meta = dict(self._collection(conn, fresh=True).metadata or {})
        self._follow(str(meta.get("version", "")))
        return meta

    def _peek_metadata(self) -> dict[str, Any] | None:
        """The folder's collection metadata read straight from its SQLite file, read-only,
        before any Chroma client exists: a fresh process whose snapshot is cached on disk
        answers without loading Chroma at all. None when it cannot be read that way."""
        uri = f"{(self.settings.index_dir / 'chroma.sqlite3').resolve().as_uri()}?mode=ro"
        try:
            with closing(sqlite3.connect(uri, uri=True, timeout=_PEEK_WAIT_S)) as db:
                rows = db.execute(
                    "SELECT m.key, m.str_value, m.int_value, m.float_value, m.bool_value "
                    "FROM collection_metadata m JOIN collections c ON c.id = m.collection_id "
                    "WHERE c.name = ?",
                    (self.settings.collection,),
                ).fetchall()
        except sqlite3.Error:
            return None
        meta: dict[str, Any] = {}
        for key, text, integer, real, flag in rows:
            values = (text, integer, real)
            meta[key] = (
                bool(flag) if flag is not None else next((v for v in values if v is not None), None)
            )
        if "version" not in meta:
            return None
        self._peeked = meta
        return meta

    def _folder_has_index(self) -> bool:
        return (self.settings.index_dir / "chroma.sqlite3").is_file()

    def _follow(self, version: str) -> None:
        """Read the folder afresh when another client has written to it since this store
        last looked (see ``_embedded_client``); a Chroma server needs nothing."""
        with self._lock:
            stale = self._conn is not None  # no client yet: nothing to read afresh
            if stale and self._seen and version != self._seen and not self.settings.chroma_url:
                self._reconnect()
            self._seen = version

    def version(self) -> str:
        """Changes with every write; read afresh on each call (one request to a server)."""
        return str(self.metadata().get("version", ""))

    def bump_version(self, stamp: str | None = None) -> None:
        """Give the index a new version stamp, so that readers everywhere reload.

        A stamp set before this store has written (the start of an ingest) begins with
        ``WRITING``; the one set after its writes does not. A snapshot read under a
        ``WRITING`` stamp may miss the rest of the write (or a write that crashed), so
        readers do not keep it on disk for other processes. ``stamp``: the one to set (from
        ``new_stamp``), when its snapshot was published first.
        """
        stamp = stamp or (self.new_stamp() if self._written else WRITING + self.new_stamp())
        self._modify({**self.metadata(), "version": stamp})
        self._written = False
        self._seen = stamp

    @staticmethod
    def new_stamp() -> str:
        return uuid.uuid4().hex

    def _modify(self, meta: dict[str, Any]) -> None:
        meta = {k: v for k, v in meta.items() if k != "hnsw:space"}  # Chroma refuses to modify it
        with self._use() as conn:
            self._collection(conn).modify(metadata=meta)

    def drop(self) -> None:
        try:
            with self._use() as conn:
                conn.collection = None
                conn.client.delete_collection(self.settings.collection)
        except NoIndexError:
            pass

    # -- reading ---------------------------------------------------------------------------
    def _read(self, call: Callable[[Any], T]) -> T:
        """``call(collection)``; on a folder, once more through a new connection if it fails.

        Another process may be writing to the folder: its version stamp changes when it
        starts and when it ends, and this connection's vector index misses what it writes
        meanwhile (``_embedded_client``).
        """
        try:
            with self._use() as conn:
                return call(self._collection(conn))
        except StoreError:
            if self.settings.chroma_url:
                raise
        self._reconnect()
        with self._use() as conn:
            return call(self._collection(conn))

    def count(self) -> int:
        return int(self._read(lambda collection: collection.count()))

    def iter_chunks(
        self, with_documents: bool = True, with_vectors: bool = False
    ) -> Iterator[StoredChunk]:
        include = ["metadatas", "documents"] if with_documents else ["metadatas"]
        if with_vectors:
            include.append("embeddings")
        offset = 0
        while True:
            page = self._read(partial(_page, include=include, offset=offset))
            n = len(page["ids"])
            docs = page.get("documents") or [""] * n
            vectors = page.get("embeddings") if with_vectors else None
            rows = zip(page["ids"], docs, page["metadatas"], strict=True)
            for i, (cid, text, meta) in enumerate(rows):
                vector = None if vectors is None else np.asarray(vectors[i], dtype=np.float32)
                yield StoredChunk(cid, text or "", dict(meta or {}), vector)
            if n < _PAGE:
                return
            offset += _PAGE

    # -- writing ---------------------------------------------------------------------------
    def upsert(
        self,
        ids: Sequence[str],
        embeddings: np.ndarray,
        documents: Sequence[str],
        metadatas: Sequence[dict[str, Any]],
    ) -> None:
        with self._use() as conn:
            collection = self._collection(conn)
            for start in range(0, len(ids), _PAGE):
                end = start + _PAGE
                collection.upsert(
                    ids=list(ids[start:end]),
                    embeddings=embeddings[start:end],
                    documents=list(documents[start:end]),
                    metadatas=list(metadatas[start:end]),
                )
                self._written = True

    def delete_chunks(self, chunk_ids: Sequence[str]) -> None:
        with self._use() as conn:
            collection = self._collection(conn)
            for start in range(0, len(chunk_ids), _PAGE):
                collection.delete(ids=list(chunk_ids[start : start + _PAGE]))
                self._written = True


def _page(collection: Any, include: list[str], offset: int) -> Any:
    return collection.get(include=include, limit=_PAGE, offset=offset)


def _is_transport_error(exc: Exception) -> bool:
    """A connection refused, a timeout, or an HTTP error status without a Chroma error
    (chromadb raises a plain ``Exception`` with the response's text for those)."""
    import httpx

    return isinstance(exc, httpx.HTTPError) or type(exc) is Exception


def _is_chroma_error(exc: Exception) -> bool:
    """One of Chroma's errors: its own classes, or one its compiled bindings raise (their
    classes live in ``chromadb_rust_bindings`` and have no common base to test)."""
    from chromadb.errors import ChromaError

    return isinstance(exc, ChromaError) or type(exc).__module__.startswith("chromadb")
