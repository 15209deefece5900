# Everything runs offline from the project's .venv; `make setup` creates it.
SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

BIN := .venv/bin
SRC := rag ui eval tests bench
DATA := rag/data/icml2026_abstracts.txt

# No network at run time: models come from pip packages, telemetry stays off.
export HF_HUB_OFFLINE := 1
export TRANSFORMERS_OFFLINE := 1
export GRADIO_ANALYTICS_ENABLED := False
export ANONYMIZED_TELEMETRY := False
export NO_PROXY := 127.0.0.1,localhost
export no_proxy := 127.0.0.1,localhost

.PHONY: help setup lock index run test lint format clean

help:
	@echo "make setup   create/update .venv and the model files (fast when nothing changed)"
	@echo "make index   ingest $(DATA) (incremental)"
	@echo "make run     setup, index, then serve the web chat"
	@echo "make test    setup, lint, type-check, then pytest"
	@echo "make lint    ruff check, ruff format --check, mypy"
	@echo "make format  ruff format and ruff check --fix"
	@echo "make lock    rewrite requirements.lock from .venv"
	@echo "make clean   empty index_store and remove tool caches (keeps .venv and models)"

setup:
	bash scripts/setup.sh

lock:
	bash scripts/setup.sh --lock

index: setup
	$(BIN)/rag ingest $(DATA)

run: setup index
	$(BIN)/rag serve

lint: setup
	$(BIN)/ruff check $(SRC)
	$(BIN)/ruff format --check $(SRC)
	$(BIN)/mypy

test: setup lint
	$(BIN)/python -m pytest -q

format: setup
	$(BIN)/ruff format $(SRC)
	$(BIN)/ruff check --fix $(SRC)

clean:
	find index_store -mindepth 1 -not -name .gitkeep -delete
	rm -rf .pytest_cache .mypy_cache .ruff_cache
	find . -path ./.venv -prune -o -type d -name __pycache__ -exec rm -rf {} +
