"""The controlled vocabulary of algorithm and data-structure tags, with synonyms: the platform's,
so that reviewers' tags (review) and BenchEvolver's mutation families (its engine) name the same
things without either importing the other.

Keys are compared after ``normalize_tag_key``: lower case, hyphens/underscores/dots as
spaces, runs of spaces collapsed. Curators grow the vocabulary by approving or merging
reviewer proposals; this list is only the starting point loaded by migration 0002.
"""

from __future__ import annotations

import re

# canonical name -> synonyms (the canonical name is always its own synonym)
VOCABULARY: dict[str, tuple[str, ...]] = {
    "implementation": ("simulation", "impl"),
    "math": ("mathematics",),
    "number theory": ("nt", "modular arithmetic", "primes", "gcd"),
    "combinatorics": ("counting", "combinatorial counting"),
    "probability": ("expected value", "expectation"),
    "greedy": (),
    "sorting": ("sort",),
    "binary search": ("bs", "binary search on answer", "bisection"),
    "two pointers": ("sliding window", "two pointer"),
    "prefix sums": ("prefix sum", "partial sums", "cumulative sums", "difference array"),
    "brute force": ("bruteforce", "exhaustive search", "complete search"),
    "constructive algorithms": ("constructive", "construction"),
    "dynamic programming": (
        "dp",
        "memoization",
        "memoized recursion",
        "dp on dag",
        "dp over dag",
        "dag dp",
    ),
    "bitmask dp": (
        "bitmasks dp",
        "dp over subsets",
        "subset dp",
        "dp with bitmask",
        "dp over bitmasks",
    ),
    "digit dp": (),
    "tree dp": ("dp on trees",),
    "bit manipulation": ("bitmasks", "bitmask", "bitwise", "xor"),
    "strings": ("string processing",),
    "hashing": ("string hashing", "rolling hash", "polynomial hashing"),
    "kmp": ("prefix function", "knuth morris pratt", "z function", "z algorithm"),
    "suffix structures": ("suffix array", "suffix automaton", "suffix tree"),
    "trie": ("prefix tree",),
    "graphs": ("graph", "graph theory", "graph search", "graph traversal"),
    "bfs": ("breadth first search",),
    "dfs": ("depth first search",),
    "shortest paths": ("dijkstra", "bellman ford", "floyd warshall", "0 1 bfs"),
    "minimum spanning tree": ("mst", "kruskal", "prim"),
    "topological sort": ("toposort", "topo sort", "dag"),
    "strongly connected components": ("scc", "tarjan", "kosaraju"),
    "flows": ("max flow", "maximum flow", "min cut", "network flow", "dinic"),
    "matching": ("bipartite matching", "hungarian algorithm", "kuhn"),
    "trees": ("tree",),
    "lowest common ancestor": ("lca", "binary lifting"),
    "heavy-light decomposition": ("hld", "heavy light decomposition", "heavy light"),
    "centroid decomposition": ("centroid",),
    "disjoint set union": ("dsu", "union find", "union-find"),
    "segment tree": ("segtree", "seg tree", "lazy propagation", "lazy segment tree"),
    "fenwick tree": ("bit", "binary indexed tree", "bit tree"),
    "sparse table": ("rmq", "range minimum query"),
    "sqrt decomposition": ("mo's algorithm", "mos algorithm", "sqrt"),
    "heaps": ("priority queue", "heap"),
    "stacks and queues": ("monotonic stack", "monotonic queue", "deque", "stack", "queue"),
    "hash tables": ("hash map", "dictionary", "hashmap"),
    "geometry": ("computational geometry", "convex hull"),
    "game theory": ("games", "sprague grundy", "nim"),
    "divide and conquer": ("d&c", "dnc"),
    "matrix exponentiation": ("matrix power", "fast matrix exponentiation"),
    "fft": ("ntt", "fast fourier transform", "polynomial multiplication"),
    "interactive": (),
    "meet in the middle": ("mitm",),
    "backtracking": ("recursion", "recursive search", "backtracking search"),
    "convex hull trick": ("cht", "li chao tree"),
}


def normalize_tag_key(text: str) -> str:
    """'Heavy-Light  Decomposition' -> 'heavy light decomposition'."""
    text = text.strip().lower()
    text = re.sub(r"[-_./]+", " ", text)
    return re.sub(r"\s+", " ", text).strip()
