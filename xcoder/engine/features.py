"""Feature trees (appendix B.1): parsing extractions, merging them into one tree, diffing an
evolved tree against the current one, counting features per category, sampling subtrees.

Pure functions over plain data; the database is touched in xcoder/stages/. A tree here is a
nested dict ``{name: {child: {...}}}`` whose leaves are empty dicts; model answers use lists at
the leaf level and are normalised by ``as_tree``.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass

from evolution.llm.parsing import ParseError, extract_json

# Table 8's categories, the ones merged into the tree. "programming language", "purpose" and
# "summary" are kept on the extraction record but are not features to compose tasks from.
CATEGORIES = (
    "algorithm",
    "data structures",
    "problem type",
    "implementation logic",
    "complexity analysis",
    "optimization techniques",
)
_CATEGORY_ALIASES = {
    "algorithms": "algorithm",
    "data structure": "data structures",
    "problem types": "problem type",
    "implementation": "implementation logic",
    "complexity": "complexity analysis",
    "optimization technique": "optimization techniques",
    "optimisation techniques": "optimization techniques",
    "optimizations": "optimization techniques",
}
PATH_SEP = " / "
_SPACES = re.compile(r"[\s_]+")
_BEGIN_END = re.compile(r"<begin>(.*?)<end>", re.DOTALL | re.IGNORECASE)


def norm(name: str) -> str:
    """The merge key of a feature name: case, underscores and spacing do not make a new one."""
    return _SPACES.sub(" ", str(name)).strip().lower()


def category_of(key: str) -> str | None:
    key = norm(key)
    key = _CATEGORY_ALIASES.get(key, key)
    return key if key in CATEGORIES else None


def parse_tagged_json(text: str) -> dict:
    """The JSON object between <begin> and <end> (the document's prompts), else anywhere.
    Raises ParseError."""
    match = _BEGIN_END.search(text or "")
    return extract_json(match.group(1) if match else text)


def as_tree(value) -> dict:
    """Normalise a model's JSON (dicts, lists of names, bare strings) to ``{name: {...}}``."""
    if isinstance(value, dict):
        return {str(k).strip(): as_tree(v) for k, v in value.items() if str(k).strip()}
    if isinstance(value, list):
        tree: dict = {}
        for item in value:
            if isinstance(item, dict):
                for k, v in as_tree(item).items():
                    tree.setdefault(k, {}).update(v)
            elif isinstance(item, str | int | float) and str(item).strip():
                tree.setdefault(str(item).strip(), {})
        return tree
    if isinstance(value, str) and value.strip():
        return {value.strip(): {}}
    return {}


def extraction_categories(features: dict) -> dict[str, dict]:
    """{category: subtree} for the categories merged into the tree (others ignored)."""
    result: dict[str, dict] = {}
    for key, value in features.items():
        category = category_of(key)
        if category is None:
            continue
        merged = result.setdefault(category, {})
        _merge_into(merged, as_tree(value))
    return result


def parse_extraction(text: str) -> dict:
    """The extraction answer as JSON; ParseError when none, or when no category is usable."""
    data = parse_tagged_json(text)
    if not extraction_categories(data):
        raise ParseError("the extraction names none of the categories: " + ", ".join(CATEGORIES))
    return data


def _merge_into(target: dict, tree: dict) -> None:
    by_key = {norm(k): k for k in target}
    for name, children in tree.items():
        key = by_key.get(norm(name))
        if key is None:
            target[name] = {}
            key = by_key[norm(name)] = name
        _merge_into(target[key], children)


@dataclass(frozen=True)
class NodeSpec:
    """A node to store: its category, normalised path, display name and parent path."""

    category: str
    path: str
    name: str
    parent_path: str | None
    depth: int


def node_specs(category: str, tree: dict) -> list[NodeSpec]:
    """Every node of a category subtree, parents before children, the category node first."""
    root = norm(category)
    specs = [NodeSpec(category, root, category, None, 0)]

    def walk(node: dict, parent_path: str, depth: int) -> None:
        for name, children in node.items():
            path = parent_path + PATH_SEP + norm(name)
            specs.append(NodeSpec(category, path, name, parent_path, depth))
            walk(children, path, depth + 1)

    walk(tree, root, 1)
    return specs


@dataclass
class EvolutionDiff:
    breadth: list[NodeSpec]
    depth: list[NodeSpec]


def evolution_diff(category: str, existing_paths: set[str], leaf_paths: set[str], expanded: dict):
    """New nodes of an evolved category tree. A new node under a node that was a leaf is a
    depth expansion (a finer sub-feature); any other new node is a breadth expansion (a new
    sibling, or a node inside a new sibling's subtree)."""
    diff = EvolutionDiff(breadth=[], depth=[])
    for spec in node_specs(category, expanded):
        if spec.path in existing_paths:
            continue
        if spec.parent_path in leaf_paths:
            diff.depth.append(spec)
        else:
            diff.breadth.append(spec)
    return diff


def evolved_category_tree(text: str, category: str) -> dict:
    """The category's subtree from an evolution answer (the answer may or may not wrap it in
    the category key). Raises ParseError."""
    data = parse_tagged_json(text)
    for key, value in data.items():
        if category_of(key) == category:
            return as_tree(value)
    if len(data) == 1:
        raise ParseError(f"the evolved tree's top key is not the category {category!r}")
    return as_tree(data)


def nested(paths: list[tuple[str, ...]]) -> dict:
    """Build a nested tree from name tuples; a node whose children are all leaves becomes a
    list (the shape of the document's sampled trees)."""
    tree: dict = {}
    for names in paths:
        node = tree
        for name in names:
            node = node.setdefault(name, {})

    def shape(node: dict):
        if node and all(not child for child in node.values()):
            return list(node)
        return {k: shape(v) for k, v in node.items()}

    return shape(tree)


def sample_leaves(
    leaves_by_category: dict[str, list[tuple[str, ...]]],
    *,
    leaves: int,
    categories: int,
    rng: random.Random,
) -> list[tuple[str, ...]]:
    """Pick ``categories`` categories that have leaves, then ``leaves`` leaves among them, at
    least one per chosen category. Each leaf is its display-name path from the category."""
    available = sorted(c for c, items in leaves_by_category.items() if items)
    if not available:
        return []
    chosen = rng.sample(available, min(categories, len(available)))
    picked: list[tuple[str, ...]] = []
    for category in chosen:
        picked.append(rng.choice(leaves_by_category[category]))
    pool = [leaf for c in chosen for leaf in leaves_by_category[c] if leaf not in picked]
    extra = max(0, leaves - len(picked))
    picked += rng.sample(pool, min(extra, len(pool)))
    return sorted(picked)


def selected_features(tree) -> list[str]:
    """Leaf feature names of a selected_features_tree (leaves carry "feature" and/or
    "potential_use"); a leaf without "feature" is named by its key."""
    found: list[str] = []

    def walk(node, key: str | None) -> None:
        if isinstance(node, dict):
            if "potential_use" in node or "feature" in node:
                found.append(str(node.get("feature") or key or "").strip())
                return
            for k, v in node.items():
                walk(v, k)
        elif isinstance(node, list):
            for item in node:
                walk(item, key if not isinstance(item, str) else item)
        elif isinstance(node, str) and key is not None:
            found.append(key)

    walk(tree, None)
    return [f for f in found if f]


def annotated_leaves(tree) -> dict[str, str]:
    """{normalised leaf name: potential_use} of a feature_roles_tree."""
    found: dict[str, str] = {}

    def walk(node, key: str | None) -> None:
        if isinstance(node, dict):
            if "potential_use" in node:
                found[norm(node.get("feature") or key or "")] = str(node["potential_use"])
                return
            for k, v in node.items():
                walk(v, k)

    walk(tree, None)
    return found


def parse_evolved_tree(text: str) -> dict[str, dict]:
    """{category: subtree} of an evolution answer for a whole (one seed's) feature tree.
    Raises ParseError when it names none of the categories."""
    data = parse_tagged_json(text)
    categories = extraction_categories(data)
    if not categories:
        raise ParseError("the evolved tree names none of the categories: " + ", ".join(CATEGORIES))
    return categories


def union(base: dict[str, dict], extra: dict[str, dict]) -> dict[str, dict]:
    """``base`` with every node of ``extra`` added (same-name nodes are one): an evolution that
    leaves a feature out does not remove it."""
    import copy

    result = copy.deepcopy(base)
    for category, tree in extra.items():
        _merge_into(result.setdefault(category, {}), tree)
    return result


def seed_evolution_diff(before: dict[str, dict], after: dict[str, dict]) -> EvolutionDiff:
    """New nodes of one seed's evolved tree against its tree before the round, over every
    category (depth: under a former leaf; breadth: any other new node)."""
    diff = EvolutionDiff(breadth=[], depth=[])
    for category, tree in after.items():
        old = node_specs(category, before.get(category, {}))
        paths = {s.path for s in old}
        parents = {s.parent_path for s in old}
        leaves = {p for p in paths if p not in parents and p != norm(category)}
        part = evolution_diff(category, paths, leaves, tree)
        diff.breadth += part.breadth
        diff.depth += part.depth
    return diff
