"""The per-run Markdown report (the document's report_run_*.md), from plain data."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class ReportItem:
    reasoning_type: str
    difficulty: int
    question_index: int
    question: str
    answer: str
    score: float | None
    rationale: str
    created_at: str
    status: str = "judged"
    parse_failures: int = 0
    disagreement: bool = False
    overridden: bool = False
    similarity: float | None = None
    regenerations: int = 0


@dataclass(frozen=True)
class ReportData:
    campaign: str
    run_number: int
    started_at: str
    finished_at: str
    alpha: float
    run_score: float | None
    ema: float | None
    run_count: int
    next_difficulty: int
    type_names: list[str]
    type_scores: dict[str, float | None]
    ema_by_reasoning_type: dict[str, float]
    levels: list[dict]  # [{"difficulty", "score", "ema", "reason"}]
    ema_by_difficulty: dict[str, float]
    items: list[ReportItem] = field(default_factory=list)
    stop_reason: str = ""
    replayed: bool = False
    series: str = ""  # the benchmark the run continues (its run numbers count across campaigns)


def _f(value: float | None, digits: int = 3) -> str:
    return "–" if value is None else f"{value:.{digits}f}"


def _block(text: str) -> str:
    text = (text or "").rstrip() or "(empty)"
    fence = "````" if "```" in text else "```"
    return f"{fence}text\n{text}\n{fence}"


def render(data: ReportData) -> str:
    scored = [i for i in data.items if i.score is not None]
    correct = sum(1 for i in scored if i.score == 1.0)
    lines = [
        f"# Self-evolving benchmark report: {data.campaign}, run {data.run_number}",
        "",
        f"- Started: {data.started_at}",
        f"- Finished: {data.finished_at}",
    ]
    if data.series:
        lines.append(f"- Series: {data.series}")
    if data.replayed:
        lines.append("- Model responses: replayed from a recorded cassette")
    lines += [
        f"- Questions: {len(data.items)} ({len(scored)} scored, {correct} correct)",
        f"- Run score: {_f(data.run_score)}",
        f"- Overall EMA (alpha = {data.alpha}): {_f(data.ema)}",
        f"- Completed runs: {data.run_count}",
        f"- Next run starts at difficulty {data.next_difficulty}",
    ]
    if data.stop_reason:
        lines.append(f"- Run ended: {data.stop_reason}")
    lines += ["", "## Performance by reasoning type", ""]
    lines += ["| Reasoning type | Run score | EMA |", "| --- | --- | --- |"]
    for name in data.type_names:
        lines.append(
            f"| {name} | {_f(data.type_scores.get(name))} | "
            f"{_f(data.ema_by_reasoning_type.get(name))} |"
        )
    lines += ["", "## Performance by difficulty", ""]
    lines += ["| Difficulty | Run score | EMA |", "| --- | --- | --- |"]
    for level in data.levels:
        d = level["difficulty"]
        lines.append(
            f"| {d} | {_f(level.get('score'))} | {_f(data.ema_by_difficulty.get(str(d)))} |"
        )
    visited = [level["difficulty"] for level in data.levels]
    lines += ["", "## Matrix (mean score per reasoning type and difficulty)", ""]
    lines.append("| Reasoning type | " + " | ".join(f"D{d}" for d in visited) + " |")
    lines.append("| --- |" + " --- |" * len(visited))
    for name in data.type_names:
        cells = []
        for d in visited:
            values = [i.score for i in scored if i.reasoning_type == name and i.difficulty == d]
            cells.append(_f(sum(values) / len(values), 2) if values else "–")
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    lines += ["", "## Examples", ""]
    for n, item in enumerate(data.items, start=1):
        verdict = {1.0: "correct", 0.0: "incorrect"}.get(item.score, _f(item.score))
        notes = []
        if item.status != "judged":
            verdict = f"not scored ({item.status})"
        if item.parse_failures:
            notes.append(f"{item.parse_failures} judge parse failure(s)")
        if item.disagreement:
            notes.append("judges disagreed")
        if item.overridden:
            notes.append("score overridden by a curator")
        if item.regenerations:
            notes.append(f"regenerated {item.regenerations} time(s)")
        if item.similarity is not None:
            notes.append(f"max similarity to earlier questions {item.similarity:.2f}")
        lines += [
            f"### {n}. {item.reasoning_type}, difficulty {item.difficulty}, "
            f"question {item.question_index + 1}",
            "",
            f"- Score: **{verdict}**" + (f" ({'; '.join(notes)})" if notes else ""),
            f"- Created: {item.created_at}",
            "",
            "**Question**",
            "",
            _block(item.question),
            "",
            "**Answer**",
            "",
            _block(item.answer),
            "",
            "**Rationale**",
            "",
            _block(item.rationale),
            "",
        ]
    return "\n".join(lines).rstrip() + "\n"
