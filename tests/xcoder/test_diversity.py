"""B.4's diversity estimate, done on CPU: TF-IDF, a 2-D SVD map, K-means and centroid
distances (xcoder/engine/diversity.py)."""

from __future__ import annotations

import math

from xcoder.engine import diversity

GRAPHS = [
    "Given a weighted graph with n vertices and m edges find the shortest route between cities",
    "A road network of cities and edges: report the cheapest path from the capital vertex",
    "Count the connected components of an undirected graph whose vertices are islands",
    "Each edge of the graph has a toll; find the path between two vertices paying least",
]
STRINGS = [
    "Given a string of lowercase letters count the palindromic substrings it contains",
    "Find the longest substring of the string in which every letter appears twice",
    "Two strings of letters: print the shortest string having both as subsequences",
    "A password string is strong when no letter repeats in a substring of length three",
]
GEOMETRY = [
    "Points on the plane: compute the area of the convex polygon around all points",
    "Given circles on the plane report whether any two circles intersect at points",
    "Compute the perimeter of the polygon whose corners are the given lattice points",
    "Triangles on the plane are given by three points; count overlapping triangle pairs",
]


def test_tasks_on_three_topics_fall_into_three_separated_clusters():
    statements = GRAPHS + STRINGS + GEOMETRY
    result = diversity.estimate(statements, clusters=3)
    labels = result.labels
    # Every topic is one cluster, and the three clusters are different.
    groups = [set(labels[0:4]), set(labels[4:8]), set(labels[8:12])]
    assert all(len(g) == 1 for g in groups), labels
    assert len(set.union(*groups)) == 3
    assert sorted(result.sizes) == [4, 4, 4]
    # The map is normalised to the unit square; centroid distances are reported.
    assert all(0.0 <= x <= 1.0 and 0.0 <= y <= 1.0 for x, y in result.points)
    pairs = [
        math.dist(a, b) for i, a in enumerate(result.centroids) for b in result.centroids[i + 1 :]
    ]
    assert result.mean_distance == sum(pairs) / 3 > 0.3
    assert result.min_distance == min(pairs) and result.max_distance == max(pairs)
    assert "TF-IDF" in result.method and "differently" in result.method


def test_the_estimate_is_deterministic_and_needs_two_tasks():
    statements = GRAPHS + STRINGS
    assert diversity.estimate(statements).to_dict() == diversity.estimate(statements).to_dict()
    # k is capped at the number of tasks (the document's 10 clusters need 10 tasks).
    assert len(diversity.estimate(statements[:3]).sizes) <= 3
    assert diversity.estimate(GRAPHS[:1]) is None
