"""The per-task difficulty estimate (appendix B.3 done differently) and its calibration.

The document fine-tunes Qwen2.5-Coder-14B-Instruct, with a classification token, to predict the
Codeforces rating of CodeContests tasks (84% validation accuracy) and reports the distribution
of its predictions over 1,000 generated tasks in Table 10 (ratings 1200 to 3400 in steps of
200). Fine-tuning a 14B model needs accelerators this project does not have, so BenchForge asks
a judge model for a Codeforces-style rating instead (the document's own §3 Q5 has GPT-4o assign
difficulty scores "simulating the Codeforces rating system"), and reads the rating out of
whatever the model answers (``parse_rating``). The estimate is labelled with its method
wherever it is shown (``METHOD_LABEL``): it is a model's judgement of the statement, not the
document's fine-tuned classifier, and has no validation accuracy of its own.

What it can claim is measured here, on the campaign's own problems: where the panel measured
pass@1 for accepted problems, ``spearman`` gives the rank correlation between the judged
ratings and the measured pass@1 (a harder problem should be solved less often, so agreement is
a negative coefficient), with the number of problems it is computed over.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass

from evolution.correlation import spearman_rho
from evolution.llm.parsing import ParseError

METHOD = "model-judged"
METHOD_LABEL = "model-judged rating, not the document's fine-tuned classifier"
# Codeforces problem ratings run from 800 to 3500 in steps of 100.
RATING_MIN, RATING_MAX, RATING_STEP = 800, 3500, 100
# Table 10's rating bins (CodeContests' annotated ratings): 1200, 1400, ..., 3400.
TABLE10_BINS = tuple(range(1200, 3401, 200))

# 2100, 2100.5, 2,100, 2 100 (a thousands separator), never a digit run's middle.
_NUMBER = r"(?<![\d,.])(\d[,\u202f ]\d{3}|\d{3,4}(?:\.\d+)?)(?![\d,])"
# "rating": 2100 / Rating: ~2,100 / **Codeforces rating** = 2100 / rated 2100 / difficulty 1900
_LABELLED = re.compile(
    r"(?i)(?:rating|rated|difficulty)\W{0,12}?(?:of|is|about|around|approximately|roughly|~|≈|:|=|\s)*"
    + _NUMBER
)
_RANGE = re.compile(r"(?<!\d)(\d{3,4})\s*(?:-|–|—|to|and)\s*(\d{3,4})(?!\d)")
_ANY = re.compile(r"(?<![\d.])(\d{3,4})(?![\d.])")
_THINK = re.compile(r"(?is)<think>.*?</think>")


@dataclass(frozen=True)
class Rating:
    rating: int  # rounded to Codeforces' step of 100, within 800..3500
    table10_bin: int  # the nearest of Table 10's bins
    raw: float  # the number the answer gave
    rationale: str

    def to_dict(self) -> dict:
        return {
            "rating": self.rating,
            "table10_bin": self.table10_bin,
            "raw": self.raw,
            "rationale": self.rationale,
        }


def _number(text: str) -> float:
    return float(text.replace(",", "").replace(" ", ""))


def _plausible(value: float) -> bool:
    return 500 <= value <= 5000


def snap(value: float) -> int:
    """The rating on Codeforces' grid: clamped to 800..3500, rounded to a multiple of 100."""
    clamped = min(max(value, RATING_MIN), RATING_MAX)
    return int(RATING_STEP * math.floor(clamped / RATING_STEP + 0.5))


def table10_bin(rating: int) -> int:
    return min(TABLE10_BINS, key=lambda b: (abs(b - rating), b))


def parse_rating(text: str) -> Rating:
    """The Codeforces-style rating a judge model gave, from messy output: a JSON object with
    ``rating`` (in a fence or inline, possibly as a string), else a labelled number ("Rating:
    ~2,100", "**difficulty** = 1900"), else a range ("1800-2000": its middle), else the last
    plausible rating-sized number after any reasoning block. ParseError when none is found."""
    body = _THINK.sub(" ", text or "")
    rationale = ""
    candidates: list[float] = []
    for match in re.finditer(r"\{[^{}]*\}", body, re.DOTALL):
        try:
            data = json.loads(match.group(0))
        except ValueError:
            continue
        if isinstance(data, dict):
            value = data.get("rating", data.get("codeforces_rating", data.get("difficulty")))
            if isinstance(value, str):
                found = re.search(_NUMBER, value)
                value = _number(found.group(1)) if found else None
            if isinstance(value, int | float) and not isinstance(value, bool):
                candidates.append(float(value))
                rationale = str(data.get("rationale") or data.get("reason") or "")
                break
    if not candidates:
        labelled = [_number(m.group(1)) for m in _LABELLED.finditer(body)]
        candidates = [v for v in labelled if _plausible(v)]
    if not candidates:
        ranges = [
            (_number(a) + _number(b)) / 2
            for a, b in _RANGE.findall(body)
            if _plausible(_number(a)) and _plausible(_number(b))
        ]
        candidates = ranges
    if not candidates:
        candidates = [v for v in map(_number, _ANY.findall(body)) if _plausible(v)][-1:]
    plausible = [v for v in candidates if _plausible(v)]
    if not plausible:
        raise ParseError("no Codeforces-style rating (800 to 3500) in the judge's answer")
    value = plausible[-1]  # a model states its conclusion last
    if not rationale:
        rationale = body.strip()
    rating = snap(value)
    return Rating(
        rating=rating, table10_bin=table10_bin(rating), raw=value, rationale=rationale[:2000]
    )


def spearman(xs: list[float], ys: list[float]) -> float | None:
    """Spearman's rank correlation of judged ratings and measured pass@1
    (``evolution.correlation``); None with fewer than 3 pairs or when either side is constant."""
    if len(xs) != len(ys):
        raise ValueError("spearman needs pairs")
    return spearman_rho(xs, ys) if len(xs) >= 3 else None
