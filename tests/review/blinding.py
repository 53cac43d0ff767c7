"""A reusable crawl of everything a reviewer can reach, and a leak detector.

``crawl_reviewer_surface`` starts at the home page and the reviewer queue, follows every
same-site link (``href``, ``hx-get``, GET form ``action``) a reviewer receives, and also
drives the writes a reviewer can make (autosave, a failed and a successful submit, the JSON
API, unknown ids and forbidden pages) so error pages are checked too.
``find_leaks`` then looks for provenance in every body and header: forbidden JSON keys,
values taken from the database (titles, public ids, datasets, methods, campaign and model
names, timestamps) and words that name provenance.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from html import unescape

from evolution.models import Campaign, ModelEndpoint, Problem
from reasoning.models import ReasoningItem
from review.models import ReviewRound

# Keys a reviewer response must never carry, at any depth.
FORBIDDEN_KEYS = frozenset(
    {
        "public_id",
        "title",
        "kind",
        "method",
        "origin_dataset",
        "origin_id",
        "origin_difficulty",
        "contest_date",
        "metadata",
        "parent",
        "parent_id",
        "lineage",
        "lineage_id",
        "lineage_root",
        "lineage_depth",
        "lineage_position",
        "campaign",
        "campaign_id",
        "created_at",
        "updated_at",
        "submitted_at",
        "opened_at",
        "model",
        "endpoint",
        "problem_id",
        "problem_public_id",
        "round",
        "reviewer",
        "position",
        # reasoning items: what made and scored them
        "reasoning_type",
        "judge_score",
        "score",
        "rationale",
        "verdicts",
        "run",
        "question_index",
        "similarity",
    }
)
# Words that would tell a reviewer where a problem came from.
FORBIDDEN_WORDS = re.compile(
    r"\b(seed|seeds|evolved|evolve|evolution|lineage|campaign|origin|provenance|parent|mutat\w*|model)\b",
    re.IGNORECASE,
)
TIMESTAMP = re.compile(r"\b\d{4}-\d{2}-\d{2}\b|\b\d{2}:\d{2}:\d{2}\b")
LINK = re.compile(r'(?:href|hx-get|action)="(/[^"]*)"')
SKIP = ("/static/", "/logout/", "/admin/")


@dataclass
class Fetched:
    label: str
    status: int
    body: str
    headers: str
    is_json: bool


def _record(out: list[Fetched], label: str, response) -> Fetched:
    body = response.content.decode("utf-8", "replace") if not response.streaming else ""
    headers = " ".join(f"{k}: {v}" for k, v in response.items())
    fetched = Fetched(
        label=label,
        status=response.status_code,
        body=body,
        headers=headers,
        is_json=response.get("Content-Type", "").startswith("application/json"),
    )
    out.append(fetched)
    return fetched


def _payload_for(html: str) -> tuple[list[str], dict[str, str]]:
    ids = sorted(set(re.findall(r'name="([0-9a-f]{12})-justification"', html)))
    data = {}
    for opaque in ids:
        data.update(
            {
                f"{opaque}-clarity": "4",
                f"{opaque}-novelty": "3",
                f"{opaque}-difficulty": "3",
                f"{opaque}-quality": "4",
                f"{opaque}-validity": "unsure",
                f"{opaque}-validity_reason": "",
                f"{opaque}-cf_rating": "1750",
                f"{opaque}-tags": "dp, new crawler tag",
                f"{opaque}-justification": "crawl",
                # reasoning items' own field (coding forms ignore it)
                f"{opaque}-answer_verdict": "unsure",
            }
        )
    return ids, data


def crawl_reviewer_surface(client) -> list[Fetched]:
    """Everything the logged-in reviewer ``client`` can reach. Submits the first group."""
    out: list[Fetched] = []
    seen: set[str] = set()
    todo = ["/", "/review/", "/review/tags/suggest/?q=h"]
    group_pages: list[str] = []
    while todo:
        url = unescape(todo.pop(0))
        if url in seen or url.startswith(SKIP):
            continue
        seen.add(url)
        fetched = _record(out, f"GET {url}", client.get(url))
        if re.fullmatch(r"/review/g/[0-9a-f]+/", url) and fetched.status == 200:
            group_pages.append(url)
        if fetched.status == 200 and not fetched.is_json:
            todo.extend(u for u in LINK.findall(fetched.body) if "/draft/" not in u)
    assert group_pages, "the crawl found no group page: the crawl itself is broken"

    for i, url in enumerate(group_pages):
        ids, data = _payload_for(client.get(url).content.decode())
        _record(out, f"POST {url}draft/", client.post(url + "draft/", data))
        # A failed submit (invalid validity reason, no certification) renders errors.
        _record(out, f"POST {url} (invalid)", client.post(url, data))
        if i == 0:
            for opaque in ids:
                data[f"{opaque}-validity"] = "valid"
            data["certify_no_ai"] = "on"
            _record(out, f"POST {url} (valid)", client.post(url, data, follow=True))
            _record(out, f"GET {url} (submitted)", client.get(url))
            _record(out, f"POST {url}draft/ (locked)", client.post(url + "draft/", data))

    # The JSON API.
    queue = _record(out, "GET /api/review/queue", client.get("/api/review/queue"))
    _record(out, "GET /api/review/scales", client.get("/api/review/scales"))
    _record(out, "GET /api/review/tags/suggest", client.get("/api/review/tags/suggest?q=seg"))
    for entry in json.loads(queue.body):
        path = f"/api/review/groups/{entry['opaque_id']}"
        group = _record(out, f"GET {path}", client.get(path))
        served = json.loads(group.body)
        items = [
            {"opaque_id": p["opaque_id"], "justification": "api"}
            for p in served["problems"] + served.get("questions", [])
        ]
        body = json.dumps({"items": items})
        _record(
            out,
            f"PUT {path}/draft",
            client.put(f"{path}/draft", body, content_type="application/json"),
        )
        _record(
            out,
            f"POST {path}/submit",
            client.post(f"{path}/submit", body, content_type="application/json"),
        )

    # Errors: unknown ids, curator-only pages and operations.
    for url in (
        "/review/g/0123456789ab/",
        "/api/review/groups/0123456789ab",
        "/review/rounds/",
        "/api/review/rounds",
        "/review/tags/",
    ):
        _record(out, f"GET {url}", client.get(url))
    for url in ("/review/g/0123456789ab/draft/", "/review/g/0123456789ab/"):
        _record(out, f"POST {url}", client.post(url, {}))
    return out


def provenance_values(review_round: ReviewRound) -> set[str]:
    """Strings that identify where the round's problems came from (all of them, every group)."""
    problem_ids = review_round.groups.values_list("items__problem_id", flat=True)
    values: set[str] = {review_round.name}
    for p in Problem.objects.filter(pk__in=problem_ids):
        values |= {
            p.public_id,
            p.title,
            p.origin_dataset,
            p.origin_id,
            p.method,
            p.origin_difficulty,
        }
        values |= {p.created_at.isoformat(), p.created_at.strftime("%Y-%m-%d %H:%M")}
    for c in Campaign.objects.filter(lineages__seed__in=review_round.groups.values("root_problem")):
        values.add(c.name)
    for e in ModelEndpoint.objects.all():
        values |= {e.name, e.model}
    # Reasoning groups: campaign, type, judges' rationales and status notes of their items.
    for item in ReasoningItem.objects.filter(
        review_items__group__round=review_round
    ).select_related("reasoning__campaign"):
        values |= {item.reasoning.campaign.name, item.reasoning_type, item.rationale}
        values |= {item.status_reason, item.override_reason}
        values |= {str(v.get("rationale") or "") for v in item.verdicts or []}
        values |= {item.created_at.isoformat(), item.created_at.strftime("%Y-%m-%d %H:%M")}
    # Very short values ("t1", "easy") would match innocent text; real ids are longer.
    return {v for v in values if v and len(v) >= 6}


def _walk_keys(value, path=""):
    if isinstance(value, dict):
        for k, v in value.items():
            yield f"{path}.{k}", k
            yield from _walk_keys(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _walk_keys(v, f"{path}[{i}]")


def _visible_text(html: str) -> str:
    # Words are judged on what a person reads: drop tags and attribute soup, keep text.
    text = re.sub(r"<script\b.*?</script>|<style\b.*?</style>", " ", html, flags=re.S)
    return unescape(re.sub(r"<[^>]+>", " ", text))


def find_leaks(fetched: list[Fetched], values: set[str]) -> list[str]:
    """Human-readable leak reports; empty when nothing reveals provenance."""
    leaks = []
    for f in fetched:
        raw = unescape(f.body) + "\n" + f.headers
        for value in values:
            if value.casefold() in raw.casefold():
                leaks.append(f"{f.label}: contains provenance value {value!r}")
        if f.is_json and f.body:
            for path, key in _walk_keys(json.loads(f.body)):
                if key in FORBIDDEN_KEYS:
                    leaks.append(f"{f.label}: JSON key {path}")
            text = f.body
        else:
            text = _visible_text(f.body)
        # Words are checked on review pages; the site's home page describes the product
        # (which evolves problems) identically for everyone and names no problem.
        if "/review" in f.label:
            for m in FORBIDDEN_WORDS.finditer(text):
                leaks.append(f"{f.label}: word {m.group(0)!r}")
        if m := TIMESTAMP.search(text):
            leaks.append(f"{f.label}: timestamp {m.group(0)!r}")
    return leaks


def schema_field_leaks(schemas) -> list[str]:
    """Forbidden field names declared by ninja schemas (nested schemas included)."""
    leaks = []
    for schema in schemas:
        for name in schema.model_fields:
            if name in FORBIDDEN_KEYS:
                leaks.append(f"{schema.__name__}.{name}")
    return leaks


# --- presentation that differs by origin ------------------------------------------------------

_TIME_LIMIT = re.compile(r"Time limit:\s*([0-9.]+)\s*s")
_MEMORY_LIMIT = re.compile(r"Memory limit:\s*([0-9]+)\s*MB")


def limit_leaks(fetched: list[Fetched]) -> list[str]:
    """Limits that differ between the problems of one group: a seed kept at 2 s / 256 MB next
    to evolutions at 1 s / 512 MB tells the reviewer which one is the seed."""
    leaks = []
    for f in fetched:
        if f.status != 200 or not f.body:
            continue
        if f.is_json and f.label.startswith("GET /api/review/groups/"):
            problems = json.loads(f.body).get("problems", [])
            shown = {(p["time_limit_s"], p["memory_mb"]) for p in problems}
            if len(shown) > 1:
                leaks.append(f"{f.label}: limits differ within the group: {sorted(shown)}")
        elif f.label.startswith("GET /review/g/"):
            times = set(_TIME_LIMIT.findall(f.body))
            memories = set(_MEMORY_LIMIT.findall(f.body))
            if len(times) > 1 or len(memories) > 1:
                leaks.append(
                    f"{f.label}: limits differ within the group: {sorted(times)} s, "
                    f"{sorted(memories)} MB"
                )
    return leaks


# --- public pages ----------------------------------------------------------------------------


def crawl_public_surface(client, start: str = "/releases/") -> list[Fetched]:
    """Every public release page ``client`` can reach from ``start`` (HTML only)."""
    out: list[Fetched] = []
    seen: set[str] = set()
    todo = [start]
    while todo:
        url = unescape(todo.pop(0))
        if url in seen or not url.startswith("/releases/"):
            continue
        seen.add(url)
        fetched = _record(out, f"GET {url}", client.get(url))
        if fetched.status == 200 and not fetched.is_json and "text/html" in fetched.headers:
            todo.extend(LINK.findall(fetched.body))
    return out


@dataclass
class UnderReview:
    """A released problem that reviewers are rating blind right now."""

    public_id: str
    origin: str
    tags: list[str]
    title: str = ""


def public_page_leaks(fetched: list[Fetched], under_review: list[UnderReview]) -> list[str]:
    """Origin labels or reviewer tags shown next to a problem that is under blind review.

    On an item's own page the whole page is about that problem; on a release page only the
    table row that names the problem counts."""
    leaks = []
    for f in fetched:
        if f.status != 200 or f.is_json:
            continue
        for item in under_review:
            if f.label.endswith(f"/items/{item.public_id}/"):
                scopes = [_visible_text(f.body)]
            else:
                rows = re.findall(r"<tr\b.*?</tr>", f.body, flags=re.S)
                scopes = [_visible_text(r) for r in rows if item.public_id in r]
            for text in scopes:
                # A title is the problem's name, chosen when it was written; it is judged by
                # the reviewer-side crawl, not here.
                if item.title:
                    text = text.replace(item.title, " ")
                if re.search(rf"\b{re.escape(item.origin)}\b", text, flags=re.IGNORECASE):
                    leaks.append(f"{f.label}: {item.public_id} shows its origin {item.origin!r}")
                for tag in item.tags:
                    if tag.casefold() in text.casefold():
                        leaks.append(f"{f.label}: {item.public_id} shows reviewer tag {tag!r}")
    return leaks
