"""Edge checks every request passes before any view runs."""

from __future__ import annotations

import json
import re

from django.conf import settings
from django.core.exceptions import RequestDataTooBig
from django.http import HttpResponseBadRequest, JsonResponse

_JSON_NUL = (b"\\u0000", b"\\U0000")  # JSON escapes decode to NUL; case of the hex is free
_JSON_NUL_ESCAPE = re.compile(rb"\\[uU]0000")
# Uploads read as bytes by their readers (the seed import's Parquet and gzipped JSON lines);
# every other upload is text (JSON lines: seed files, solutions files, leaderboard uploads).
_BINARY_UPLOADS = (".parquet", ".gz")


def _has_nul(value) -> bool:
    return isinstance(value, str) and "\x00" in value


def _bad_request(request, where: str):
    return _error(
        request, f"{where} contains a NUL character (U+0000), which no text field accepts"
    )


def _error(request, message: str):
    """A 400 in the form the client reads: JSON for the API, plain text elsewhere."""
    if request.path.startswith("/api/"):
        return JsonResponse({"detail": message}, status=400)
    return HttpResponseBadRequest(message, content_type="text/plain; charset=utf-8")


class RejectNulMiddleware:
    """Refuse NUL characters in the URL, the query string, form or JSON bodies and uploaded
    text files with a 400.

    PostgreSQL cannot store U+0000 in text and psycopg raises when one reaches a query, so
    without this check a NUL anywhere (``/releases/…/items/p%00x/``) became a 500. An uploaded
    text file (anything but ``.parquet`` and ``.gz``, which their readers take as bytes) is
    refused for a NUL byte, or a JSON line whose ``\\u0000`` escape decodes to one, naming the
    file, the line and the field (a NUL in a leaderboard upload's code was a 500)."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        if "\x00" in request.path or "\x00" in request.path_info:
            return _bad_request(request, "the URL")
        for key, values in request.GET.lists():
            if _has_nul(key) or any(_has_nul(v) for v in values):
                return _bad_request(request, f"query parameter {key!r}")
        if request.method in ("POST", "PUT", "PATCH", "DELETE"):
            try:
                problem = self._body_problem(request)
            except RequestDataTooBig:
                return _error(
                    request,
                    "the request body is larger than MAX_UPLOAD_BYTES "
                    f"({settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes)",
                )
            if problem:
                return _bad_request(request, problem)
        return self.get_response(request)

    @staticmethod
    def _body_problem(request) -> str | None:
        content_type = request.content_type or ""
        if content_type in ("application/x-www-form-urlencoded", "multipart/form-data"):
            for key, values in request.POST.lists():
                if _has_nul(key) or any(_has_nul(v) for v in values):
                    return f"form field {key!r}"
            for _, uploads in request.FILES.lists():
                for upload in uploads:
                    if problem := _upload_problem(upload):
                        return problem
            return None
        body = request.body
        if b"\x00" in body:
            return "the request body"
        if content_type.endswith("json") and any(m in body for m in _JSON_NUL):
            try:
                field = _first_nul_field(json.loads(body))
            except ValueError:
                return None  # malformed JSON is the parser's to report
            if field is not None:
                return f"field {field!r}"
        return None


def _upload_problem(upload) -> str | None:
    """Where an uploaded text file holds a NUL: "uploaded file 's.jsonl', line 3, field
    'code_list[0]'", or None."""
    name = upload.name or "(unnamed)"
    if name.lower().endswith(_BINARY_UPLOADS):
        return None
    try:
        data = upload.read()
    finally:
        upload.seek(0)
    where = f"uploaded file {name!r}"
    if (at := data.find(b"\x00")) >= 0:
        line = data.count(b"\n", 0, at) + 1
        return f"{where}, line {line}"
    if not _JSON_NUL_ESCAPE.search(data):
        return None
    for number, line in enumerate(data.split(b"\n"), start=1):
        if not _JSON_NUL_ESCAPE.search(line):
            continue
        try:
            field = _first_nul_field(json.loads(line))
        except ValueError:
            continue  # not JSON: the file's reader says so, naming the line
        if field is not None:
            return f"{where}, line {number}, field {field!r}"
    return None


def _first_nul_field(value, path: str = "") -> str | None:
    """The dotted path of the first string (or key) in a JSON document that holds a NUL."""
    if isinstance(value, str):
        return path or "(body)" if "\x00" in value else None
    if isinstance(value, dict):
        for key, item in value.items():
            here = f"{path}.{key}" if path else str(key)
            if "\x00" in str(key):
                return here
            if (found := _first_nul_field(item, here)) is not None:
                return found
    if isinstance(value, list):
        for index, item in enumerate(value):
            if (found := _first_nul_field(item, f"{path}[{index}]")) is not None:
                return found
    return None


class AdminRefusalMiddleware:
    """An admin edit the model guards or the database's immutability triggers refuse (a
    frozen release, a published run, a benchmark's frozen identity) comes back to the same
    page with the reason as an error message, instead of a 500. The admin view's transaction
    has already rolled back when the exception arrives here."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        from django.contrib import messages
        from django.db import IntegrityError, InternalError
        from django.http import HttpResponseRedirect

        from releases.models import FrozenReleaseError

        if request.method != "POST" or not request.path.startswith("/admin/"):
            return None
        if not isinstance(exception, FrozenReleaseError | IntegrityError | InternalError):
            return None
        reason = str(exception).strip().splitlines()[0] if str(exception).strip() else "refused"
        messages.error(request, f"Not saved: {reason}")
        return HttpResponseRedirect(request.get_full_path())
