"""Session loss on pages that talk to the server in the background (htmx).

A view that needs a login answers an anonymous request with a redirect to the login page. A
browser's XMLHttpRequest follows that redirect silently, so htmx used to receive the login form
with a 200 and swap it into whatever it was updating: the review form's save indicator, the
live campaign panel. The middleware turns that redirect into a 401 for htmx requests, which htmx
does not swap, and ``static/js/session.js`` shows a banner, keeps the page as it is and notices
the re-login through :func:`session_state`.
"""

from __future__ import annotations

from urllib.parse import urlsplit

from django.conf import settings
from django.http import HttpResponse, JsonResponse
from django.middleware.csrf import get_token
from django.shortcuts import render, resolve_url
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_GET

SESSION_ENDED = "Your session has ended: log in again. Nothing on this page was lost."


class HtmxSessionMiddleware:
    """An htmx request redirected to the login page gets a 401 instead of the login form."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if request.headers.get("HX-Request") != "true":
            return response
        if response.status_code not in (301, 302, 303, 307, 308):
            return response
        login_path = urlsplit(resolve_url(settings.LOGIN_URL)).path
        if urlsplit(response.get("Location", "")).path != login_path:
            return response
        answer = HttpResponse(SESSION_ENDED, status=401, content_type="text/plain; charset=utf-8")
        # Belt and braces: even an htmx configured to swap errors leaves the page alone.
        answer["HX-Reswap"] = "none"
        return answer


@never_cache
@require_GET
def session_state(request):
    """Whether this browser is logged in, and the CSRF token to use from now on (Django
    rotates the token at login, so a page opened before a re-login holds a stale one)."""
    return JsonResponse(
        {
            "authenticated": bool(request.user.is_authenticated),
            "username": request.user.get_username() if request.user.is_authenticated else "",
            "csrf_token": get_token(request),
        }
    )


@never_cache
@require_GET
def logged_in_again(request):
    """Where the banner's "log in again" tab lands: the other tab carries on by itself."""
    return render(request, "benchapp/logged_in_again.html")
