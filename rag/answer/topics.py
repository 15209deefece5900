"""The themes of a venue and year (or of the whole index): its papers grouped by their stored
vectors, each group named by the terms that set it apart.

papers (of a venue/year) -> one unit vector per paper (the mean of its chunks' vectors) ->
groups (k-means, k chosen by silhouette) -> each group's distinctive terms (class-based
TF-IDF over titles and abstracts, as BERTopic does) -> a label: the top terms, or a short
name a model wrote when every word of it is among the group's terms or in its abstracts ->
a 2-D map (the first two principal components of the vectors).

The result is cached on disk under the index's version stamp, so it follows every ingest;
model-written labels are added to the same file, per backend.
"""

from __future__ import annotations

import hashlib
import json
import re
import shutil
import uuid
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import numpy as np

from ..index.lexical import tokenize
from ..index.snapshot import Corpus
from ..index.store import PaperStore, describe
from ..settings import cache_dir
from ..types import Paper
from .support import GENERIC_STEMS, plain

K_MAX = 30  # themes an overview can still name; more only splits what a reader calls one
TERMS = 10  # distinctive terms kept per theme
LABEL_TERMS = 3  # of which the label names this many
# A term that at least this share of the papers of most groups use tells no theme apart from
# the others ("training, networks, neural" in a deep-learning venue), once there are enough
# papers for shares to mean something.
COMMON_SHARE = 0.2
COMMON_MIN_PAPERS = 20
_SILHOUETTE_SAMPLE = 4000  # papers the silhouette is measured on (it is quadratic)
# silhouettes closer than this are a tie, and the tie goes to more groups: k-means' own
# restarts move the silhouette by about as much, and an overview of two themes says little
SILHOUETTE_TIE = 0.01
_FORMAT = 2  # of the cache files


@dataclass(frozen=True)
class Topic:
    """A group of papers close in meaning, named by the terms that set it apart.

    ``papers`` come most central first; ``points`` hold each paper's place on the 2-D map,
    in the same order.
    """

    topic_id: int
    label: str
    terms: tuple[str, ...]
    size: int
    papers: tuple[Paper, ...]
    points: tuple[tuple[float, float], ...]

    @property
    def term_label(self) -> str:
        """The label the terms alone give."""
        return term_label(self.terms)


# -- selecting and embedding the papers ------------------------------------------------------
def select(
    corpus: Corpus,
    venue: str | None = None,
    year_min: int | None = None,
    year_max: int | None = None,
) -> np.ndarray:
    """Rows (in ``corpus.paper_ids``) of the papers of a venue and years."""
    keep = np.ones(len(corpus.paper_ids), dtype=bool)
    if venue:
        keep &= corpus.paper_venues == venue.lower()
    if year_min is not None:
        keep &= corpus.paper_years >= year_min
    if year_max is not None:
        keep &= (corpus.paper_years <= year_max) & (corpus.paper_years >= 0)
    return np.flatnonzero(keep)


def paper_vectors(corpus: Corpus, rows: np.ndarray) -> np.ndarray:
    """One unit vector per paper: the mean of its chunks' stored vectors."""
    sums = np.zeros((len(corpus.paper_ids), corpus.vectors.shape[1]), dtype=np.float64)
    np.add.at(sums, corpus.chunk_paper_rows, np.asarray(corpus.vectors, dtype=np.float64))
    chosen = sums[rows]
    norms = np.linalg.norm(chosen, axis=1, keepdims=True)
    return (chosen / np.where(norms > 0, norms, 1)).astype(np.float32)


# -- grouping --------------------------------------------------------------------------------
def candidate_ks(n: int) -> list[int]:
    """The numbers of groups tried: 2 up to about sqrt(n), at most ``K_MAX``, spaced out."""
    top = min(K_MAX, max(2, round(np.sqrt(n))), n - 1)
    ks = sorted({k for k in (*range(2, 11), 12, 15, 18, 21, 25, 30) if k <= top})
    return ks


def kmeans(vectors: np.ndarray, k: int, seed: int = 0) -> np.ndarray:
    from sklearn.cluster import KMeans

    return np.asarray(KMeans(k, n_init=3, random_state=seed).fit_predict(vectors))


def silhouette(vectors: np.ndarray, labels: np.ndarray, seed: int = 0) -> float:
    from sklearn.metrics import silhouette_score

    if len(set(labels.tolist())) < 2:
        return -1.0
    sample = _SILHOUETTE_SAMPLE if len(vectors) > _SILHOUETTE_SAMPLE else None
    return float(
        silhouette_score(vectors, labels, metric="cosine", sample_size=sample, random_state=seed)
    )


def group(
    vectors: np.ndarray, cluster: Callable[[np.ndarray, int], np.ndarray] = kmeans
) -> np.ndarray:
    """Each paper's group: the grouping with the best silhouette over ``candidate_ks`` (the
    most groups among ties); one group when there are too few papers to split."""
    if len(vectors) < 4:
        return np.zeros(len(vectors), dtype=np.int64)
    tried = []
    for k in candidate_ks(len(vectors)):
        labels = cluster(vectors, k)
        tried.append((silhouette(vectors, labels), k, labels))
    best = max(score for score, _, _ in tried)
    _, _, labels = max((t for t in tried if t[0] >= best - SILHOUETTE_TIE), key=lambda t: t[1])
    return _by_size(labels)


def _by_size(labels: np.ndarray) -> np.ndarray:
    """Group numbers renumbered largest first."""
    ids, counts = np.unique(labels, return_counts=True)
    order = ids[np.lexsort((ids, -counts))]
    renumber = {int(old): new for new, old in enumerate(order)}
    return np.array([renumber[int(x)] for x in labels], dtype=np.int64)


# -- naming ----------------------------------------------------------------------------------
_URL = re.compile(r"https?://\S+|\\url\{[^}]*\}|github\.com\S*")
_MATH = re.compile(r"\$[^$]*\$")
# what every abstract says of itself, and so names no theme
_PAPER_SPEAK = (
    "state art results experiments experimental extensive existing based furthermore "
    "significantly significant outperforms outperform outperforming baselines baseline "
    "superior effectiveness effective efficient efficiently improves improve improved "
    "improving improvement improvements performance tasks task code available publicly "
    "demonstrate demonstrates proposed propose paper approach method framework novel "
    "different various key challenge challenges challenging recent recently remain remains "
    "limited specifically strong wide range including large real world real-world better "
    "achieves achieve achieving across prior previous work works problem problems settings "
    "setting new high low lack target targets integrated individual unlike current best "
    "terms practical high-quality given able ability effectively end-to-end plug-and-play "
    "typically usually commonly widely often critical crucial important fundamental "
    "promising powerful simple standard general "
    "cid"  # what PDF text extraction leaves of unmapped glyphs: "(cid:27)"
)
_STOP: frozenset[str] | None = None


def _stop_words() -> frozenset[str]:
    global _STOP
    if _STOP is None:
        from sklearn.feature_extraction.text import ENGLISH_STOP_WORDS

        _STOP = frozenset(ENGLISH_STOP_WORDS) | frozenset(_PAPER_SPEAK.split())
    return _STOP


def document(paper: Paper) -> str:
    """A paper's title and abstract as plain words: no LaTeX, math or links."""
    text = plain(_URL.sub(" ", f"{paper.title}. {paper.abstract}"))
    return _MATH.sub(" ", text)


def distinctive_terms(
    documents: Sequence[str], labels: np.ndarray, n: int = TERMS
) -> list[tuple[str, ...]]:
    """Each group's most distinctive words and two-word phrases, best first.

    Class-based TF-IDF: a term's share of the group's words, times log(1 + the average
    group's words / the term's count over all groups). Counts are per paper (a paper that
    repeats a word counts once), and in a group of three or more a term needs two of its
    papers, so a term names a group when many of its papers use it.
    """
    from sklearn.feature_extraction.text import CountVectorizer

    vectorizer = CountVectorizer(
        token_pattern=r"(?u)\b[^\W\d_][\w-]*[^\W_]\b",
        stop_words=sorted(_stop_words()),
        ngram_range=(1, 2),
        min_df=2 if len(documents) >= 50 else 1,
        binary=True,
    )
    counts = vectorizer.fit_transform(documents)
    vocabulary = vectorizer.get_feature_names_out()
    groups = int(labels.max()) + 1
    per_group = np.zeros((groups, counts.shape[1]))
    for g in range(groups):
        per_group[g] = np.asarray(counts[labels == g].sum(axis=0)).ravel()
    words = per_group.sum(axis=1, keepdims=True)
    tf = per_group / np.where(words > 0, words, 1)
    idf = np.log(1 + words.mean() / np.maximum(per_group.sum(axis=0), 1))
    scores = tf * idf
    sizes = np.bincount(labels, minlength=groups)[:, None]
    scores[(per_group < 2) & (sizes >= 3)] = 0  # one paper's word names no group of three
    useful = np.array([_names_something(t) for t in vocabulary])
    if len(documents) >= COMMON_MIN_PAPERS and groups >= 2:
        # a term most groups use ("neural", "networks" in a deep-learning venue) names none
        spread = (per_group / np.maximum(sizes, 1) >= COMMON_SHARE).sum(axis=0)
        useful &= spread <= groups / 2
    return [_top_terms(vocabulary, np.where(useful, row, 0), n) for row in scores]


def _names_something(term: str) -> bool:
    """A term whose words are not all generic ("proposed method" names nothing)."""
    return any(s not in GENERIC_STEMS for s in tokenize(term))


def _top_terms(vocabulary: np.ndarray, scores: np.ndarray, n: int) -> tuple[str, ...]:
    """The best terms, without one whose words a better term already says ("galaxy" after
    "galaxies", "speech" after "speech recognition")."""
    chosen: list[str] = []
    for i in np.argsort(-scores, kind="stable"):  # ties by vocabulary order, on any CPU
        if scores[i] <= 0 or len(chosen) >= n:
            break
        term = str(vocabulary[i])
        stems = set(tokenize(term))
        if stems <= {s for c in chosen for s in tokenize(c)}:
            continue
        chosen = [c for c in chosen if not set(tokenize(c)) < stems] + [term]
    return tuple(chosen)


def term_label(terms: Sequence[str]) -> str:
    return ", ".join(terms[:LABEL_TERMS])


# -- the map ---------------------------------------------------------------------------------
def project(vectors: np.ndarray) -> np.ndarray:
    """Each paper's place on a 2-D map: the first two principal components of the vectors,
    scaled into [-1, 1]."""
    if len(vectors) < 2:
        return np.zeros((len(vectors), 2))
    centred = vectors - vectors.mean(axis=0)
    _, _, axes = np.linalg.svd(centred, full_matrices=False)
    points = centred @ axes[:2].T
    if points.shape[1] < 2:
        points = np.pad(points, ((0, 0), (0, 2 - points.shape[1])))
    scale = np.abs(points).max()
    return points / scale if scale > 0 else points


# -- model-written labels --------------------------------------------------------------------
LABEL_PROMPT = (
    "These research papers form one group. Their most distinctive terms: {terms}.\n"
    "Titles:\n{titles}\n\nName the group's research topic in two to four words, using "
    "words from the terms. Reply with the name only."
)


def label_messages(terms: Sequence[str], papers: Sequence[Paper]) -> list[dict[str, str]]:
    titles = "\n".join(f"- {plain(p.title)}" for p in papers[:5])
    prompt = LABEL_PROMPT.format(terms=", ".join(terms), titles=titles)
    return [{"role": "user", "content": prompt}]


def checked_label(reply: str, terms: Sequence[str], papers: Sequence[Paper]) -> str:
    """The model's label when every content word of it is among the terms or in the group's
    abstracts and it shares a word with the top terms; "" otherwise."""
    label = re.sub(r"^\W+|[\W_]+$", "", reply.strip().splitlines()[0] if reply.strip() else "")
    label = re.sub(r"^(?:topic|theme|group|name)\s*:\s*", "", label, flags=re.I).strip(" \"'*")
    words = [s for s in tokenize(label) if s not in GENERIC_STEMS]
    if not label or not words or len(label.split()) > 6:
        return ""
    known = {s for t in terms for s in tokenize(t)}
    for p in papers:
        known.update(tokenize(document(p)))
    top = {s for t in terms[:LABEL_TERMS] for s in tokenize(t)}
    if any(w not in known for w in words) or not top & set(words):
        return ""
    # most of its words must be the group's distinctive terms, not words every paper uses
    # ("Deep Learning and Neural Networks")
    distinctive = {s for t in terms for s in tokenize(t)}
    if 2 * sum(w in distinctive for w in words) < len(words):
        return ""
    return label


# -- building and caching --------------------------------------------------------------------
def build(corpus: Corpus, rows: np.ndarray) -> list[Topic]:
    """The topics of the papers at ``rows``, largest first."""
    if not len(rows):
        return []
    vectors = paper_vectors(corpus, rows)
    labels = group(vectors)
    points = project(vectors)
    papers = [corpus.papers[corpus.paper_ids[r]] for r in rows]
    terms = distinctive_terms([document(p) for p in papers], labels)
    topics = []
    for g, group_terms in enumerate(terms):
        members = np.flatnonzero(labels == g)
        centre = vectors[members].mean(axis=0)
        members = members[np.argsort(-(vectors[members] @ centre), kind="stable")]
        topics.append(
            Topic(
                topic_id=g,
                label=term_label(group_terms),
                terms=group_terms,
                size=len(members),
                papers=tuple(papers[i] for i in members),
                points=tuple((float(points[i, 0]), float(points[i, 1])) for i in members),
            )
        )
    return topics


class TopicCache:
    """Topics on disk, one file per selection, under the index's version stamp: a write
    to the index changes the stamp, so the next call groups its papers anew."""

    def __init__(self, store: PaperStore) -> None:
        where = describe(store.settings)
        if not store.settings.chroma_url:
            where = str(Path(store.settings.index_dir).resolve())
        key = hashlib.sha1(f"{where}|{store.settings.collection}".encode()).hexdigest()[:16]
        self.folder = cache_dir() / "topics" / key

    def path(self, version: str, selection: str) -> Path:
        name = hashlib.sha1(selection.encode()).hexdigest()[:16]
        return self.folder / version / f"{name}.json"

    def read(self, corpus: Corpus, selection: str) -> tuple[list[Topic], dict[str, Any]] | None:
        """The cached topics and the raw record (for its labels), or None."""
        try:
            data = json.loads(self.path(corpus.version, selection).read_text())
            if data["format"] != _FORMAT or data["selection"] != selection:
                return None
            topics = [
                Topic(
                    topic_id=t["id"],
                    label=term_label(t["terms"]),
                    terms=tuple(t["terms"]),
                    size=len(t["papers"]),
                    papers=tuple(corpus.papers[pid] for pid in t["papers"]),
                    points=tuple((float(x), float(y)) for x, y in t["points"]),
                )
                for t in data["topics"]
            ]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return topics, data

    def write(
        self,
        corpus: Corpus,
        selection: str,
        topics: list[Topic],
        labels: dict[str, dict[str, str]] | None = None,
    ) -> None:
        """Write atomically (rename into place); drop what older versions left."""
        data = {
            "format": _FORMAT,
            "version": corpus.version,
            "selection": selection,
            "labels": labels or {},
            "topics": [
                {
                    "id": t.topic_id,
                    "terms": list(t.terms),
                    "papers": [p.paper_id for p in t.papers],
                    "points": [list(xy) for xy in t.points],
                }
                for t in topics
            ],
        }
        target = self.path(corpus.version, selection)
        tmp = target.with_name(f".tmp-{uuid.uuid4().hex}")
        try:
            target.parent.mkdir(parents=True, exist_ok=True)
            tmp.write_text(json.dumps(data))
            tmp.replace(target)
        except OSError:
            tmp.unlink(missing_ok=True)  # the cache only saves time
            return
        for old in self.folder.iterdir():
            if old.name != corpus.version:
                shutil.rmtree(old, ignore_errors=True)


def selection_key(venue: str | None, year_min: int | None, year_max: int | None) -> str:
    return json.dumps([(venue or "").lower(), year_min, year_max])


def topics_of(
    corpus: Corpus,
    cache: TopicCache,
    venue: str | None = None,
    year_min: int | None = None,
    year_max: int | None = None,
    *,
    namer: Any = None,
    backend: str = "extractive",
) -> list[Topic]:
    """The topics of a venue and years, from the cache when it holds this index version;
    with ``namer`` (a ``rag.answer.generators.Generator`` that writes), each labelled by the model
    where its label passes ``checked_label``; labels are cached per ``backend``."""
    selection = selection_key(venue, year_min, year_max)
    cached = cache.read(corpus, selection)
    if cached is None:
        topics = build(corpus, select(corpus, venue, year_min, year_max))
        labels: dict[str, dict[str, str]] = {}
    else:
        topics, data = cached
        labels = data.get("labels", {})
    if namer is not None and namer.writes and backend not in labels:
        labels[backend] = {str(t.topic_id): model_label(namer, t) for t in topics}
        cache.write(corpus, selection, topics, labels)
    elif cached is None:
        cache.write(corpus, selection, topics, labels)
    named = labels.get(backend, {})
    return [replace(t, label=named.get(str(t.topic_id)) or t.label) for t in topics]


def model_label(namer: Any, topic: Topic) -> str:
    """A short name for the topic from the model, or "" when it fails the check."""
    reply = "".join(namer.chat(label_messages(topic.terms, topic.papers)))
    return checked_label(reply, topic.terms, topic.papers)
