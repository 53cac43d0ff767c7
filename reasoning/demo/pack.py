"""The offline demo pack of the reasoning campaign: AUTHORED model responses for the replay
provider (labelled "replayed responses" wherever they are shown).

The questions come from small parameterised generators, one per default reasoning type, whose
correct answers are computed here. The scripted answering model gets harder questions wrong
more often and improves slightly from run to run; judge A and judge B grade honestly (judge B
sometimes answers in prose, a parse failure), judge C is wrong now and then (a disagreement).
Planted stories: two drafts that copy an earlier question (novelty rejection and regeneration)
and one draft the quality filter rejects. Nothing here decides an outcome: the engine runs the
similarity check, the quality verdicts, the ensemble vote, the EMAs and the reports live.

``python -m reasoning.demo.pack`` rewrites the cassette; a test checks that the committed
cassette is exactly what this file produces.
"""

from __future__ import annotations

import json
import random
from pathlib import Path

from ..config import DEFAULT_REASONING_TYPES
from ..engine.similarity import similarity

CASSETTE = Path(__file__).resolve().parent / "cassette.jsonl"
TYPES = [name for name, _ in DEFAULT_REASONING_TYPES]
DIFFICULTIES = list(range(1, 11))
RUNS = 3
# The demo's benchmark is one series continued across two campaigns: the first makes runs 1-2,
# the second continues the series with run 3 (its replayed answers are the cassette's run 3).
FIRST_CAMPAIGN_RUNS = 2
CONTINUED_CAMPAIGN_RUNS = RUNS - FIRST_CAMPAIGN_RUNS
MAX_QUESTIONS = 2  # weak-area focus gives two types one extra question per cell
JUDGES = ("demo-judge-a", "demo-judge-b", "demo-judge-c")
DEMO_SETTINGS = {
    "runs": FIRST_CAMPAIGN_RUNS,
    # The planted copies show the measured novelty filter, which the document does not have
    # (off by default).
    "novelty_filter": True,
    "quality_filter": True,
    "weak_area_focus": True,
    "weak_area_types": 2,
    "weak_area_extra": 1,
    "judge_aggregation": "majority",
    # Template-made questions share their sentence frames, so the demo allows more overlap than
    # the default 0.5; the planted copies (similarity 1.0) are still rejected.
    "similarity_threshold": 0.7,
}
# Cells whose first draft copies the same cell's question of the previous run.
COPIED_DRAFTS = {(2, 4, "logical_deduction"), (3, 6, "mathematical_reasoning")}
# Cell whose first draft the quality filter rejects.
QUALITY_REJECTED = {(2, 3, "data_interpretation")}
# Cells where judge B answers in prose instead of JSON.
PROSE_JUDGE_B = {(1, 5, "reading_comprehension"), (2, 8, "scientific_reasoning")}
SIMILARITY_LIMIT = 0.6  # generated questions stay below the demo's 0.7 threshold
HISTORY = 10  # the campaign's history_window

NAMES = [
    "Avery",
    "Blake",
    "Casey",
    "Dana",
    "Elliot",
    "Farah",
    "Gideon",
    "Hana",
    "Ivo",
    "Jules",
    "Kemal",
    "Lina",
    "Milo",
    "Nadia",
    "Oskar",
    "Priya",
    "Quinn",
    "Rafael",
    "Sora",
    "Tomas",
    "Uma",
    "Viktor",
    "Wren",
    "Xena",
    "Yusuf",
    "Zara",
]
SYLLABLES = [
    "ba",
    "ko",
    "ri",
    "tu",
    "me",
    "sa",
    "lo",
    "vi",
    "ne",
    "da",
    "fu",
    "zo",
    "pe",
    "gi",
    "ha",
    "mu",
]
CITIES = [
    "Lisbon",
    "Oslo",
    "Quito",
    "Hanoi",
    "Dakar",
    "Perth",
    "Lima",
    "Riga",
    "Cairo",
    "Austin",
    "Nagoya",
    "Tbilisi",
]
MONTHS = ["January", "February", "March", "April", "May", "June", "July", "August"]


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(SYLLABLES) for _ in range(3)) + "s"


def pick(rng: random.Random, *options: str) -> str:
    return rng.choice(options)


def _logical(rng, d):
    chain = [_word(rng) for _ in range(d + 2)]
    link = pick(rng, "All {a} are {b}.", "Every one of the {a} is one of the {b}.")
    facts = [link.format(a=a, b=b) for a, b in zip(chain, chain[1:], strict=False)]
    broken = rng.random() < 0.5
    if broken:
        i = rng.randrange(len(facts))
        facts[i] = f"Some {chain[i]} are {chain[i + 1]}."
    rng.shuffle(facts)
    ask = pick(
        rng,
        "Using nothing but these premises, must each of the {a} be among the {z}? Say yes or no.",
        "Does it follow that all {a} are {z}? Reply yes or no.",
        "Can we conclude with certainty that {a} are always {z}? Yes or no?",
    )
    q = " ".join(facts) + " " + ask.format(a=chain[0], z=chain[-1])
    return q, "no" if broken else "yes", "yes" if broken else "no"


def _math(rng, d):
    a, b, m = rng.randint(2, 9 + d * 3), rng.randint(3, 5 + d * 4), rng.randint(5, 7 + d * 9)
    c = rng.randint(10, 99)
    q = pick(
        rng,
        "Let x equal {a} raised to the power {b}. What is the remainder when x plus {c} is "
        "divided by {m}?",
        "Compute ({a}^{b} + {c}) mod {m}.",
        "A counter starts at {c} and is increased by {a} raised to the power {b}; it then wraps "
        "around modulo {m}. Which value does it show?",
        "Find the least non-negative residue of {a}**{b} + {c} modulo {m}.",
    ).format(a=a, b=b, c=c, m=m)
    right = (pow(a, b, m) + c) % m
    return q, str(right), str((right + rng.randint(1, m - 1)) % m)


def _commonsense(rng, d):
    name, city = rng.choice(NAMES), rng.choice(CITIES)
    start, hours, shift = rng.randint(6, 20), rng.randint(1, 3 + d), rng.randint(-3, 3)
    direction = "ahead of" if shift >= 0 else "behind"
    vehicle = pick(rng, "boards a train", "catches a ferry", "starts driving", "takes a night bus")
    q = pick(
        rng,
        "{n} {v} in {c} at {s}:00 local time. The trip takes {h} hours, and the destination's "
        "clocks are {x} hours {dir} {c}. On a 24-hour clock, what local time is it on arrival?",
        "At {s}:00 in {c}, {n} {v}. After {h} hours of travel {n} reaches a town whose time "
        "zone runs {x} hours {dir} {c}'s. What do the town's clocks show (24-hour format)?",
        "Travel puzzle: departure from {c} at {s}:00, duration {h} h, arrival zone {x} h {dir} "
        "the departure zone. {n} {v}. Give the arrival time in local 24-hour time.",
    ).format(n=name, v=vehicle, c=city, s=start, h=hours, x=abs(shift), dir=direction)
    right = (start + hours + shift) % 24
    return q, f"{right}:00", f"{(right + 1) % 24}:00"


def _reading(rng, d):
    people = rng.sample(NAMES, 3 + d // 3)
    years = sorted(rng.sample(range(1950, 2010), len(people)))
    rng.shuffle(people)
    born = dict(zip(people, years, strict=True))
    hobbies = ["chess", "rowing", "pottery", "violin", "botany", "judo", "sailing", "origami"]
    frames = [
        "{p}, who took up {h}, was born in {y}.",
        "Born in {y}, {p} spends weekends on {h}.",
        "{p} ({y}) is known locally for {h}.",
        "In {y} {p} arrived, later becoming keen on {h}.",
    ]
    sentences = [rng.choice(frames).format(p=p, y=born[p], h=rng.choice(hobbies)) for p in people]
    rng.shuffle(sentences)
    ask = pick(
        rng,
        "Question: which person in the passage is the second oldest?",
        "Who was born second, counting from the earliest birth year?",
        "Name the person with the second-earliest birth year.",
    )
    q = pick(rng, "Read the passage.", "Passage:", "Consider this text.") + " "
    q += " ".join(sentences) + " " + ask
    order = sorted(people, key=born.get)
    return q, order[1], order[0]


def _analogy(rng, d):
    start, mult, add = rng.randint(1, 9), rng.randint(2, 2 + d // 3), rng.randint(-5, 9)
    terms = [start]
    for _ in range(3 + d // 2):
        terms.append(terms[-1] * mult + add)
    shown, right = terms[:-1], terms[-1]
    q = pick(
        rng,
        "Each term of this sequence follows from the previous one by the same rule: {t}. "
        "What is the next term?",
        "Continue the pattern: {t}, ?",
        "A machine turns each number into the next with one fixed rule. It printed {t}. "
        "What does it print next?",
    ).format(t=", ".join(str(t) for t in shown))
    return q, str(right), str(right + mult)


def _science(rng, d):
    kind = rng.randrange(3)
    if kind == 0:
        p1, t1 = rng.randint(90, 300), rng.randint(250, 320)
        t2 = t1 + rng.randint(10, 40 * d)
        q = pick(
            rng,
            "A sealed rigid canister holds an ideal gas at {p} kPa and {t} K. It is warmed to "
            "{u} K. What is the new pressure in kPa, rounded to a whole number?",
            "Gas trapped in a welded tank that cannot expand reads {p} kPa at {t} K. Heating "
            "brings it to {u} K; give the pressure (kPa, nearest integer).",
        ).format(p=p1, t=t1, u=t2)
        right, wrong = round(p1 * t2 / t1), round(p1 * t1 / t2)
    elif kind == 1:
        volts, r1, r2 = rng.randint(3, 24 + d), rng.randint(2, 40), rng.randint(2, 40)
        q = pick(
            rng,
            "Two resistors of {a} ohm and {b} ohm are wired in series across a {v} V battery. "
            "What current flows, in milliamperes, rounded to the nearest whole number?",
            "A {v} volt supply drives a series chain of {a} and {b} ohm resistors. Find the "
            "current in mA (integer).",
        ).format(a=r1, b=r2, v=volts)
        right, wrong = round(1000 * volts / (r1 + r2)), round(1000 * volts / max(r1, r2))
    else:
        h = rng.randint(5, 20 * d)
        q = pick(
            rng,
            "A stone is dropped from rest off a {h} m cliff. Ignoring air resistance and using "
            "g = 9.8 m/s^2, how many seconds until it lands? Round to one decimal.",
            "Neglecting drag, how long (s, one decimal) does a ball released from {h} metres "
            "take to hit the ground with g = 9.8 m/s^2?",
        ).format(h=h)
        right, wrong = round((2 * h / 9.8) ** 0.5, 1), round(h / 9.8, 1)
    return q, str(right), str(wrong)


def _data(rng, d):
    months = MONTHS[: 4 + d // 3]
    values = [rng.randint(20, 90) * 10 for _ in months]
    rows = "; ".join(f"{m} {v}" for m, v in zip(months, values, strict=True))
    changes = [b - a for a, b in zip(values, values[1:], strict=False)]
    best = max(range(len(changes)), key=lambda i: changes[i])
    shop = pick(rng, "bakery", "bike shop", "bookstore", "florist", "tea house")
    q = pick(
        rng,
        "Units sold per month by a {c} {s}: {r}. Which month shows the largest increase "
        "compared with the month before it?",
        "Monthly sales table for a {s} in {c} ({r}). In which month did sales jump the most "
        "over the preceding month?",
        "Data ({s}, {c}): {r}. Identify the month with the biggest month-on-month gain.",
    ).format(c=rng.choice(CITIES), s=shop, r=rows)
    wrong = months[(best + 2) % len(months)]
    return q, months[best + 1], wrong


def _programming(rng, d):
    k, c, n = rng.randint(2, 5), rng.randint(1, 4 + d), rng.randint(5, 8 + 3 * d)
    r = rng.randrange(k)
    acc, idx = rng.choice(["total", "acc", "s", "result"]), rng.choice(["i", "j", "x"])
    src = (
        f"def f(n):\n    {acc} = 0\n    for {idx} in range(n):\n        if {idx} % {k} == {r}:\n"
        f"            {acc} += {idx} * {c}\n        else:\n            {acc} -= 1\n"
        f"    return {acc}"
    )
    right = sum(i * c if i % k == r else -1 for i in range(n))
    ask = pick(
        rng,
        "What does f({n}) return for this Python function?",
        "Trace the function below and give the value of f({n}).",
        "Without running it, what is f({n})?",
    ).format(n=n)
    return f"{ask}\n\n{src}", str(right), str(right + c)


GENERATORS = {
    "logical_deduction": _logical,
    "mathematical_reasoning": _math,
    "commonsense_reasoning": _commonsense,
    "reading_comprehension": _reading,
    "abstraction_analogy": _analogy,
    "scientific_reasoning": _science,
    "data_interpretation": _data,
    "computer_programming": _programming,
}
TYPE_SKILL = {  # the scripted answering model's strengths and weaknesses
    "logical_deduction": 0.05,
    "mathematical_reasoning": -0.15,
    "commonsense_reasoning": 0.15,
    "reading_comprehension": 0.1,
    "abstraction_analogy": -0.05,
    "scientific_reasoning": 0.0,
    "data_interpretation": -0.2,
    "computer_programming": 0.05,
}


def _key(run: int, d: int, t: str, q: int) -> str:
    return f"reasoning;run={run};d={d};type={t};q={q}"


EVENTS = [
    "quiz night",
    "club newsletter",
    "study group",
    "job interview",
    "school contest",
    "podcast",
]
ADJECTIVES = ["short", "tricky", "classic", "fresh", "careful", "quick"]


def _preamble(rng: random.Random) -> str:
    return (
        f"({rng.choice(NAMES)} from {rng.choice(CITIES)} wrote this {rng.choice(ADJECTIVES)} "
        f"item for a {rng.choice(EVENTS)}.) "
    )


def _questions() -> dict[tuple[int, int, str, int], tuple[str, str, str]]:
    """Every question the demo may ask, in the engine's generation order, each lexically far
    from what the engine will compare it with (the cell's earlier questions and the type's
    recent ones; the window here is twice the engine's because this table also holds the
    extra weak-area questions the engine may not ask). Resampled until it is."""
    made: dict[tuple[int, int, str, int], tuple[str, str, str]] = {}
    earlier: dict[str, list[tuple[int, str]]] = {t: [] for t in TYPES}
    for run in range(1, RUNS + 1):
        for d in DIFFICULTIES:
            for t in TYPES:
                for q in range(MAX_QUESTIONS):
                    cell = [text for dd, text in earlier[t] if dd == d]
                    recent = [text for dd, text in earlier[t] if dd != d][-2 * HISTORY :]
                    salt = 0
                    while True:
                        rng = random.Random(f"{run}/{d}/{t}/{q}/{salt}")
                        found = GENERATORS[t](rng, d)
                        found = (_preamble(rng) + found[0], found[1], found[2])
                        if all(similarity(found[0], e) <= SIMILARITY_LIMIT for e in cell + recent):
                            break
                        salt += 1
                        if salt > 500:
                            raise RuntimeError(f"no novel {t} question for run {run} d {d}")
                    made[(run, d, t, q)] = found
                    earlier[t].append((d, found[0]))
    return made


def _answer_text(rng: random.Random, final: str) -> str:
    opener = rng.choice(
        [
            "Let me work through this step by step.",
            "I will reason about each fact in turn.",
            "Breaking the problem into parts:",
        ]
    )
    return f"{opener} After checking the conditions, the result follows.\nFinal answer: {final}"


def _verdict(correct: bool, why: str) -> str:
    return json.dumps(
        {"score": "correct" if correct else "incorrect", "rationale": why}, ensure_ascii=False
    )


def responses() -> dict[tuple[str, str], str]:
    """(role, replay key) -> the authored response content."""
    table: dict[tuple[str, str], str] = {}
    questions = _questions()
    for (run, d, t, q), (question, right, wrong) in questions.items():
        base = _key(run, d, t, q)
        first = question
        if (run, d, t) in COPIED_DRAFTS and q == 0:
            first = questions[(run - 1, d, t, 0)][0]  # a copy: the novelty check rejects it
        rejected = (run, d, t) in QUALITY_REJECTED and q == 0
        if rejected:  # a draft without its data table: the quality filter rejects it
            first = (
                "Units sold per month by a neighbourhood bakery went up and down all year. "
                "Which month shows the largest increase compared with the month before it?"
            )
        table[("generation", f"{base};attempt=0;role=generation")] = first
        table[("generation", f"{base};attempt=1;role=generation")] = question
        table[("quality", f"{base};attempt=0;role=quality")] = json.dumps(
            {
                "verdict": "reject" if rejected else "accept",
                "reason": "the question gives no monthly figures to compare"
                if rejected
                else "clear, self-contained, one checkable answer",
            }
        )
        table[("quality", f"{base};attempt=1;role=quality")] = json.dumps(
            {"verdict": "accept", "reason": "clear, self-contained, one checkable answer"}
        )
        rng = random.Random(f"answer/{run}/{d}/{t}/{q}")
        p_correct = 1.02 - 0.085 * d + 0.06 * (run - 1) + TYPE_SKILL[t]
        correct = rng.random() < p_correct
        table[("answering", f"{base};role=answering")] = _answer_text(
            rng, right if correct else wrong
        )
        why_right = f"The correct answer is {right}, which matches the model's final answer."
        why_wrong = f"The correct answer is {right}; the model answered {wrong}."
        table[("evaluation", f"{base};judge=0;role=evaluation")] = _verdict(
            correct, why_right if correct else why_wrong
        )
        if (run, d, t) in PROSE_JUDGE_B:
            table[("evaluation", f"{base};judge=1;role=evaluation")] = (
                "Looking at this carefully, I believe the answer is essentially right."
            )
        else:
            table[("evaluation", f"{base};judge=1;role=evaluation")] = _verdict(
                correct, why_right if correct else why_wrong
            )
        contrarian = random.Random(f"judge-c/{run}/{d}/{t}/{q}").random() < 0.12
        table[("evaluation", f"{base};judge=2;role=evaluation")] = _verdict(
            correct != contrarian,
            "The reasoning looks sound." if correct != contrarian else "The final step is off.",
        )
    return table


def canonical_json(value) -> str:
    # The cassette format's canonical JSON (evolution.llm.cassette), without importing Django.
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def cassette_lines() -> list[str]:
    return [
        canonical_json(
            {
                "role": role,
                "key": key,
                "fingerprint": "",
                "response": {
                    "content": content,
                    "tokens_in": 40 + len(key) % 17,
                    "tokens_out": len(content.split()),
                },
            }
        )
        for (role, key), content in sorted(responses().items())
    ]


def write_cassette(path: Path = CASSETTE) -> int:
    lines = cassette_lines()
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)


if __name__ == "__main__":
    print(f"wrote {write_cassette()} exchanges to {CASSETTE}")
