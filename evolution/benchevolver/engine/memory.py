"""Memory (Section 3.4). Local memory per lineage: accepted mutations, failures with reasons,
validation issues, pass rates and error patterns, as a raw window of recent records plus a digest.
Global memory: accepted mutation families across seeds, capped by entries and characters."""

from __future__ import annotations

from collections import Counter


def remember(memory: list[dict], record: dict, *, window: int) -> list[dict]:
    """Append ``record`` and keep the newest ``window`` raw records. Older records survive only
    as counts inside the digest record kept at the head."""
    records = [r for r in memory if r.get("kind") != "digest"]
    digest = next(
        (r for r in memory if r.get("kind") == "digest"),
        {"kind": "digest", "counts": {}, "families": {}},
    )
    records.append(record)
    while len(records) > window:
        old = records.pop(0)
        _fold(digest, old)
    return [digest, *records]


def _fold(digest: dict, record: dict) -> None:
    counts = digest.setdefault("counts", {})
    counts[record.get("decision", "?")] = counts.get(record.get("decision", "?"), 0) + 1
    family = record.get("family")
    if family:
        fam = digest.setdefault("families", {})
        fam[family] = fam.get(family, 0) + 1


def digest_text(memory: list[dict], *, recent_k: int) -> str:
    """What the mutator sees: a digest of all outcomes, then the ``recent_k`` newest records raw."""
    records = [r for r in memory if r.get("kind") != "digest"]
    digest = next((r for r in memory if r.get("kind") == "digest"), {"counts": {}, "families": {}})
    if not records and not digest.get("counts"):
        return ""
    counts = Counter(digest.get("counts", {}))
    families = Counter(digest.get("families", {}))
    for r in records:
        counts[r.get("decision", "?")] += 1
        if r.get("family"):
            families[r["family"]] += 1
    lines = ["Digest: " + ", ".join(f"{k} {v}" for k, v in sorted(counts.items()))]
    accepted = [r for r in records if r.get("decision") == "accepted"]
    for r in accepted:
        lines.append(
            f"- accepted round {r.get('round')}: {r.get('family')} -> level {r.get('level')} ({r.get('idea', '')[:200]})"
        )
    if families:
        lines.append(
            "Families tried: " + ", ".join(f"{f} x{n}" for f, n in families.most_common(12))
        )
    recent = records[-recent_k:] if recent_k else []
    if recent:
        lines.append("Most recent iterations:")
    for r in recent:
        bits = [f"round {r.get('round')}", r.get("decision", "?")]
        if r.get("family"):
            bits.append(f"family {r['family']}")
        if r.get("pass_rate") is not None:
            bits.append(f"pass rate {r['pass_rate']:.2f} (level {r.get('level')})")
        if r.get("errors_by_model"):
            bits.append(
                "target errors "
                + "; ".join(
                    f"{model}: " + (", ".join(f"{k}={v}" for k, v in errs.items()) or "none")
                    for model, errs in sorted(r["errors_by_model"].items())
                )
            )
        elif r.get("errors"):
            bits.append("target errors " + ", ".join(f"{k}={v}" for k, v in r["errors"].items()))
        if r.get("parent_check"):
            bits.append(r["parent_check"][:200])
        if r.get("reason"):
            bits.append(f"reason: {r['reason'][:300]}")
        lines.append("- " + "; ".join(bits))
    return "\n".join(lines)


def global_text(
    entries: list[tuple[str, str, int]],
    *,
    max_entries: int,
    max_chars: int,
    attempted: list[tuple[str, str]] | None = None,
) -> str:
    """``entries`` are accepted (family, summary, level gain), newest last; the newest are kept.
    ``attempted`` are (family, decision) of candidates not accepted, summarised as counts
    after the accepted ones, within the same caps."""
    lines: list[str] = []
    used = 0
    for family, summary, gain in reversed(entries[-max_entries:] if max_entries else []):
        line = f"- {family} (+{gain} levels): {summary[:300]}"
        if used + len(line) + 1 > max_chars:
            break
        lines.append(line)
        used += len(line) + 1
    lines.reverse()
    if attempted and max_entries:
        counts = Counter(family for family, _ in attempted[-max_entries:])
        line = "Attempted in other lineages without acceptance: " + ", ".join(
            f"{family} x{n}" for family, n in counts.most_common(12)
        )
        if used + len(line) + 1 <= max_chars:
            lines.append(line)
    return "\n".join(lines)
