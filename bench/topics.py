"""How to group papers into themes, and how to draw them: measured, not assumed.

    .venv/bin/python bench/topics.py                       # every set below
    .venv/bin/python bench/topics.py --sets fixture,venues # some of them

Sets: ``fixture`` (tests/fixtures/topics_papers.jsonl: 18 abstracts, 3 subjects), ``venues``
(200 abstracts each of CoRL, COLM and COLT from the shared ML list: robotics, language
models, learning theory), ``bundled`` (the 19 ICML 2026 papers, no known groups) and
``needle`` (the bundled papers among ~23k others, bench/out/needle-index).

Groupings: k-means, agglomerative (Ward; average linkage on cosine), each with k chosen by
the silhouette over the same candidates, and HDBSCAN (no k). Reported: the adjusted Rand
index against the known groups, the k chosen, the silhouette, the seconds. Maps: PCA and
t-SNE, by trustworthiness (do a paper's 10 nearest neighbours on the map stay its
neighbours?) and seconds. Writes bench/out/topics.json.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from bench._util import DATA  # noqa: E402  (also sets the bench cache folder)
from rag import Assistant  # noqa: E402
from rag.evaluation import topics  # noqa: E402

OUT = ROOT / "bench" / "out"
FIXTURE = ROOT / "tests" / "fixtures" / "topics_papers.jsonl"
VENUES = ("CoRL", "COLM", "COLT")
PER_VENUE = 200
SAMPLE = 3000  # papers the quadratic methods (agglomerative, t-SNE, trustworthiness) see


def ward(vectors: np.ndarray, k: int) -> np.ndarray:
    from sklearn.cluster import AgglomerativeClustering

    return np.asarray(AgglomerativeClustering(k, linkage="ward").fit_predict(vectors))


def average_cosine(vectors: np.ndarray, k: int) -> np.ndarray:
    from sklearn.cluster import AgglomerativeClustering

    model = AgglomerativeClustering(k, metric="cosine", linkage="average")
    return np.asarray(model.fit_predict(vectors))


def hdbscan(vectors: np.ndarray) -> np.ndarray:
    from sklearn.cluster import HDBSCAN

    size = max(3, len(vectors) // 50)
    return np.asarray(HDBSCAN(min_cluster_size=size).fit_predict(vectors))


GROUPINGS: dict[str, Callable[[np.ndarray, int], np.ndarray]] = {
    "kmeans": topics.kmeans,
    "ward": ward,
    "average-cosine": average_cosine,
}


def pca(vectors: np.ndarray) -> np.ndarray:
    return topics.project(vectors)


def tsne(vectors: np.ndarray) -> np.ndarray:
    from sklearn.manifold import TSNE

    perplexity = min(30.0, max(2.0, (len(vectors) - 1) / 3))
    return np.asarray(TSNE(2, perplexity=perplexity, random_state=0).fit_transform(vectors))


MAPS = {"pca": pca, "tsne": tsne}


# -- the sets ----------------------------------------------------------------------------------
def index_of(name: str, sources: list[Path]) -> Assistant:
    assistant = Assistant.open(index_dir=OUT / f"topics-{name}-index", llm="extractive")
    if not assistant.store.exists():
        assistant.ingest(sources)
    return assistant


def venues_list() -> Path:
    path = OUT / "topics-venues.jsonl"
    if not path.exists():
        taken = dict.fromkeys(VENUES, 0)
        with DATA.open() as f, path.open("w") as out:
            for line in f:
                venue = json.loads(line).get("venue")
                if venue in taken and taken[venue] < PER_VENUE:
                    taken[venue] += 1
                    out.write(line)
    return path


def load(name: str) -> tuple[np.ndarray, np.ndarray | None]:
    """The set's paper vectors and, where known, each paper's group."""
    if name == "fixture":
        assistant = index_of("fixture", [FIXTURE])
    elif name == "venues":
        assistant = index_of("venues", [venues_list()])
    elif name == "bundled":
        assistant = index_of("bundled", [ROOT / "rag" / "data" / "icml2026_abstracts.txt"])
    else:
        assistant = Assistant.open(index_dir=OUT / "needle-index", llm="extractive")
    corpus = assistant.retriever.corpus
    rows = topics.select(corpus)
    vectors = topics.paper_vectors(corpus, rows)
    papers = [corpus.papers[corpus.paper_ids[r]] for r in rows]
    if name == "fixture":
        return vectors, _numbered([p.paper_id.split("-")[0] for p in papers])
    if name == "venues":
        return vectors, _numbered([p.venue for p in papers])
    return vectors, None


def _numbered(groups: list[str]) -> np.ndarray:
    return np.unique(groups, return_inverse=True)[1]


# -- measuring -------------------------------------------------------------------------------------
def measure_grouping(vectors: np.ndarray, truth: np.ndarray | None) -> dict[str, Any]:
    from sklearn.metrics import adjusted_rand_score

    results: dict[str, Any] = {}
    rng = np.random.default_rng(0)
    sample = rng.choice(len(vectors), min(SAMPLE, len(vectors)), replace=False)
    for name, cluster in [*GROUPINGS.items(), ("hdbscan", None)]:
        quadratic = name != "kmeans"
        rows = sample if quadratic else np.arange(len(vectors))
        started = time.perf_counter()
        if cluster is None:
            labels = hdbscan(vectors[rows])
        else:
            labels = topics.group(vectors[rows], cluster)
        seconds = time.perf_counter() - started
        found = sorted(np.unique(labels, return_counts=True)[1].tolist(), reverse=True)
        results[name] = {
            "papers": len(rows),
            "k": len(found),
            "sizes": found[:12],
            "silhouette": round(topics.silhouette(vectors[rows], labels), 3),
            "ari": None if truth is None else round(adjusted_rand_score(truth[rows], labels), 3),
            "seconds": round(seconds, 2),
        }
        print(f"  {name:15s} {results[name]}", flush=True)
    return results


def measure_maps(vectors: np.ndarray) -> dict[str, Any]:
    from sklearn.manifold import trustworthiness

    rng = np.random.default_rng(0)
    rows = rng.choice(len(vectors), min(SAMPLE, len(vectors)), replace=False)
    neighbours = min(10, (len(rows) - 1) // 2)
    results = {}
    for name, draw in MAPS.items():
        started = time.perf_counter()
        points = draw(vectors[rows])
        seconds = time.perf_counter() - started
        trust = trustworthiness(vectors[rows], points, n_neighbors=neighbours, metric="cosine")
        results[name] = {"trustworthiness": round(float(trust), 3), "seconds": round(seconds, 2)}
        print(f"  map {name:5s} {results[name]}", flush=True)
    return results


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", default="fixture,venues,bundled,needle")
    args = parser.parse_args(argv)
    report: dict[str, Any] = {}
    for name in args.sets.split(","):
        vectors, truth = load(name)
        print(f"{name}: {len(vectors)} papers", flush=True)
        report[name] = {"papers": len(vectors), "grouping": measure_grouping(vectors, truth)}
        report[name]["maps"] = measure_maps(vectors)
    OUT.mkdir(exist_ok=True)
    out = OUT / "topics.json"
    previous = json.loads(out.read_text()) if out.exists() else {}
    out.write_text(json.dumps({**previous, **report}, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
