"""HTTP caching helpers the platform's pages and data endpoints share: a conditional GET
answered 304 from an ETag, and whether the browser takes gzip."""

from __future__ import annotations

from django.http import HttpResponseNotModified


def not_modified(request, etag: str) -> HttpResponseNotModified | None:
    """A 304 when the request's If-None-Match names ``etag``, else None."""
    if etag in [t.strip() for t in request.headers.get("If-None-Match", "").split(",")]:
        response = HttpResponseNotModified()
        response["ETag"] = etag
        return response
    return None


def accepts_gzip(request) -> bool:
    return "gzip" in request.headers.get("Accept-Encoding", "")
