"""Task diversity estimate (appendix B.4), computed on CPU with nothing downloaded.

The document embeds tasks with jinaai/jina-embeddings-v2-base-code, reduces them to 2-D with
t-SNE, groups the 2-D points into 10 K-means clusters and reports the Euclidean distances
between cluster centroids (larger: more diverse). Done differently here, because that model
is a download and t-SNE is not in the project's dependencies:

- embedding: TF-IDF over the statement's lower-cased words (smoothed idf, rows L2-normalised),
  a bag-of-words vector, not a learned code embedding;
- 2-D map: truncated SVD of the centred TF-IDF matrix (its first two components, i.e. PCA),
  computed with numpy (scipy's dependency), scaled to [0, 1] on each axis so distances are
  comparable across campaigns the way the document's normalised t-SNE map is;
- clusters: K-means on the 2-D points (k = min(10, tasks), k-means++ start from a fixed seed,
  Lloyd iterations), then the centroid distances: mean, min and max over all pairs.

Pure: it takes statements and returns numbers; which tasks to include is the caller's job.
"""

from __future__ import annotations

import math
import re
from collections import Counter
from dataclasses import asdict, dataclass

METHOD = "TF-IDF + truncated SVD (2-D) + K-means; B.4 done differently (no embedding model)"
_WORD = re.compile(r"[a-z][a-z0-9_]+")


@dataclass
class Diversity:
    points: list[tuple[float, float]]  # per statement, in [0, 1]^2
    labels: list[int]  # cluster of each statement
    sizes: list[int]  # statements per cluster
    centroids: list[tuple[float, float]]
    mean_distance: float | None  # over all centroid pairs (None with fewer than 2 clusters)
    min_distance: float | None
    max_distance: float | None
    method: str = METHOD

    def to_dict(self) -> dict:
        return asdict(self)


def tfidf(texts: list[str]):
    """Rows of L2-normalised TF-IDF weights (smoothed idf: log((1 + n) / (1 + df)) + 1)."""
    import numpy as np

    docs = [Counter(_WORD.findall((t or "").lower())) for t in texts]
    vocab = sorted({w for d in docs for w in d})
    index = {w: i for i, w in enumerate(vocab)}
    matrix = np.zeros((len(docs), len(vocab)))
    for r, d in enumerate(docs):
        for w, c in d.items():
            matrix[r, index[w]] = c
    df = (matrix > 0).sum(axis=0)
    idf = np.log((1 + len(docs)) / (1 + df)) + 1
    matrix = matrix * idf
    norms = np.linalg.norm(matrix, axis=1, keepdims=True)
    return matrix / np.where(norms == 0, 1, norms)


def project_2d(matrix):
    """The first two components of the centred matrix (truncated SVD), each scaled to [0, 1]."""
    import numpy as np

    n = matrix.shape[0]
    centred = matrix - matrix.mean(axis=0)
    u, s, _ = np.linalg.svd(centred, full_matrices=False)
    coords = np.zeros((n, 2))
    k = min(2, len(s))
    coords[:, :k] = u[:, :k] * s[:k]
    for axis in range(2):
        low, high = coords[:, axis].min(), coords[:, axis].max()
        coords[:, axis] = (coords[:, axis] - low) / (high - low) if high > low else 0.5
    return coords


def kmeans(points, k: int, *, seed: int = 42, iterations: int = 100):
    """K-means with a k-means++ start from ``seed``; returns (labels, centroids)."""
    import numpy as np

    rng = np.random.default_rng(seed)
    n = len(points)
    centroids = [points[rng.integers(n)]]
    while len(centroids) < k:
        d2 = np.min([((points - c) ** 2).sum(axis=1) for c in centroids], axis=0)
        if d2.sum() == 0:
            break
        centroids.append(points[rng.choice(n, p=d2 / d2.sum())])
    centroids = np.array(centroids)
    labels = np.zeros(n, dtype=int)
    for _ in range(iterations):
        distances = ((points[:, None, :] - centroids[None, :, :]) ** 2).sum(axis=2)
        new = distances.argmin(axis=1)
        moved = [
            points[new == j].mean(axis=0) if (new == j).any() else centroids[j]
            for j in range(len(centroids))
        ]
        if (new == labels).all() and _ > 0:
            break
        labels, centroids = new, np.array(moved)
    return labels, centroids


def estimate(statements: list[str], *, clusters: int = 10, seed: int = 42) -> Diversity | None:
    """B.4's measure over ``statements``; None with fewer than two statements."""
    if len(statements) < 2:
        return None
    points = project_2d(tfidf(statements))
    labels, centroids = kmeans(points, min(clusters, len(statements)), seed=seed)
    used = sorted(set(int(x) for x in labels))
    remap = {old: new for new, old in enumerate(used)}
    cents = [(float(centroids[j][0]), float(centroids[j][1])) for j in used]
    pairs = [
        math.dist(cents[a], cents[b]) for a in range(len(cents)) for b in range(a + 1, len(cents))
    ]
    return Diversity(
        points=[(float(x), float(y)) for x, y in points],
        labels=[remap[int(x)] for x in labels],
        sizes=[int((labels == j).sum()) for j in used],
        centroids=cents,
        mean_distance=sum(pairs) / len(pairs) if pairs else None,
        min_distance=min(pairs) if pairs else None,
        max_distance=max(pairs) if pairs else None,
    )
