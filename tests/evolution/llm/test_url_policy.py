"""The endpoint URL policy at request time (issue #34, finding 3): a row written past the save
check, a host name that resolves to a private address, a name that resolves elsewhere between
the check and the connection, and a redirect. Each refusal is decided before any connection:
``connections`` refuses (and records) every connection to a non-loopback address, so even a
regression sends nothing past this machine."""

from __future__ import annotations

import json
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from evolution.llm import LLMClient, LLMTransportError
from evolution.llm.remote import failure_reason
from evolution.models import LLMCall
from evolution.policy import urlpolicy
from tests.factories import ModelEndpointFactory
from tests.support.fake_openai import FakeOpenAI
from tests.support.network import loopback_only

pytestmark = pytest.mark.django_db

PROMPT = [{"role": "user", "content": "hi"}]


@pytest.fixture
def connections(monkeypatch):
    """Every address a socket tried to connect to that is not loopback (refused here)."""
    return loopback_only(monkeypatch)


class Names:
    """Host names of the tests' own, resolved without any DNS query: ``names[host] = [...]``
    gives one answer per lookup (the last one repeats); ``lookups`` lists each lookup."""

    def __init__(self):
        self.table: dict[str, list[str]] = {}
        self.lookups: list[str] = []

    def __setitem__(self, host: str, answers: list[str]) -> None:
        self.table[host] = list(answers)

    def answer(self, host: str) -> str:
        self.lookups.append(host)
        answers = self.table[host]
        return answers.pop(0) if len(answers) > 1 else answers[0]


@pytest.fixture
def names(monkeypatch):
    found = Names()
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if isinstance(host, bytes):
            host = host.decode()
        if host not in found.table:
            return real(host, port, *args, **kwargs)
        address = found.answer(host)
        family = socket.AF_INET6 if ":" in address else socket.AF_INET
        return [(family, socket.SOCK_STREAM, 6, "", (address, port))]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return found


def _chat(endpoint):
    return LLMClient(endpoint).chat(PROMPT, role="solver")


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("http://10.255.255.1:6379/v1", "10.255.255.1 is a private (non-public) address"),
        ("http://169.254.169.254/latest", "link-local or cloud metadata"),
        ("http://100.100.100.200/v1", "link-local or cloud metadata"),
        ("http://[fd00:ec2::254]/v1", "link-local or cloud metadata"),
        ("http://[::ffff:10.0.0.1]/v1", "10.0.0.1 is a private"),
        ("http://10.0.0.1/v1?", "query string"),
    ],
)
def test_a_row_written_past_the_save_check_is_refused_before_any_connection(connections, url, why):
    endpoint = ModelEndpointFactory(base_url=url, max_retries=2)  # no clean(): raw rows
    with pytest.raises(LLMTransportError) as refused:
        _chat(endpoint)
    assert "endpoint URL policy" in str(refused.value) and why in str(refused.value)
    assert refused.value.tries == 0  # not retried: asking again is refused again
    reason = failure_reason(refused.value)
    assert reason.startswith("refused by the endpoint URL policy: ") and why in reason
    assert reason.count("endpoint URL policy") == 1
    assert connections == []
    (call,) = LLMCall.objects.filter(endpoint=endpoint)
    assert call.status == "error" and "endpoint URL policy" in call.error


def test_a_public_name_that_resolves_to_a_private_address_is_refused_after_resolution(
    connections, names
):
    names["models.example.test"] = ["10.20.30.40"]
    endpoint = ModelEndpointFactory(base_url="http://models.example.test:8000/v1", max_retries=1)
    with pytest.raises(LLMTransportError, match="models.example.test resolves to 10.20.30.40"):
        _chat(endpoint)
    assert connections == []


def test_every_address_a_name_resolves_to_is_checked(connections, monkeypatch):
    def getaddrinfo(host, port, *args, **kwargs):
        if host != "two.example.test":
            raise socket.gaierror("unknown")
        return [
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("127.0.0.1", port)),
            (socket.AF_INET, socket.SOCK_STREAM, 6, "", ("10.0.0.9", port)),
        ]

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    endpoint = ModelEndpointFactory(base_url="http://two.example.test:9/v1", max_retries=0)
    with pytest.raises(LLMTransportError, match="resolves to 10.0.0.9"):
        _chat(endpoint)
    assert connections == []


def test_the_connection_goes_to_the_address_that_was_checked(connections, names):
    """DNS rebinding: the name answers a loopback address (allowed) to the first lookup and a
    private one to any later lookup. The request resolves once, checks, and connects to the
    address it checked."""
    with FakeOpenAI() as server:
        names["rebind.example.test"] = ["127.0.0.1", "10.9.9.9"]
        endpoint = ModelEndpointFactory(
            base_url=f"http://rebind.example.test:{server.port}/v1", max_retries=0
        )
        assert _chat(endpoint).content
        assert server.request_count == 1
    assert names.lookups == ["rebind.example.test"]
    assert connections == []


def test_the_loopback_allowance_is_the_setting_not_a_default(connections, settings):
    settings.ENDPOINT_ALLOWED_PRIVATE_NETWORKS = []
    with FakeOpenAI() as server:
        endpoint = ModelEndpointFactory(base_url=server.base_url, max_retries=0)
        with pytest.raises(LLMTransportError, match="127.0.0.1 is a loopback address"):
            _chat(endpoint)
        assert server.request_count == 0


class _Redirect(BaseHTTPRequestHandler):
    target = ""
    seen: list = []

    def do_POST(self):  # noqa: N802 - http.server's name
        self.rfile.read(int(self.headers.get("Content-Length") or 0))
        type(self).seen.append(self.headers.get("Authorization"))
        self.send_response(307)
        self.send_header("Location", self.target)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass


def test_a_redirect_is_not_followed_so_the_key_stays_with_the_endpoints_host(monkeypatch):
    monkeypatch.setenv("BENCHFORGE_KEY_REDIRECT", "sk-redirect-secret")
    with FakeOpenAI() as elsewhere:
        handler = type("Handler", (_Redirect,), {"target": elsewhere.base_url, "seen": []})
        server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        thread = threading.Thread(target=server.serve_forever, daemon=True)
        thread.start()
        try:
            endpoint = ModelEndpointFactory(
                base_url=f"http://127.0.0.1:{server.server_port}/v1",
                api_key_env="BENCHFORGE_KEY_REDIRECT",
                max_retries=3,
            )
            with pytest.raises(LLMTransportError, match="redirects are not followed") as failed:
                _chat(endpoint)
        finally:
            server.shutdown()
            server.server_close()
        assert elsewhere.request_count == 0
    assert handler.seen == ["Bearer sk-redirect-secret"]  # one try, to the endpoint itself
    assert failed.value.status == 307


@pytest.mark.parametrize(
    ("status", "body", "reason"),
    [
        (401, '{"error": "SECRET-BODY"}', "HTTP 401: the provider refused the key"),
        (
            404,
            "SECRET-BODY",
            "HTTP 404: nothing answers chat completions at this URL for this model",
        ),
        (
            400,
            json.dumps({"error": {"message": "SECRET-BODY", "param": "temperature"}}),
            "HTTP 400: the provider refused the parameter 'temperature'",
        ),
    ],
)
def test_a_refusal_is_a_status_and_a_classified_reason_without_the_body(fake, status, body, reason):
    from tests.support.fake_openai import Fault

    fake.responder = lambda b, h: Fault.http_status(status, body)
    endpoint = ModelEndpointFactory(base_url=fake.base_url, max_retries=0)
    with pytest.raises(LLMTransportError) as failed:
        _chat(endpoint)
    assert str(failed.value) == reason
    (call,) = LLMCall.objects.filter(endpoint=endpoint)
    assert call.error == reason and "SECRET-BODY" not in call.error
    assert "SECRET-BODY" in call.response_text  # the ledger keeps what was answered


@pytest.mark.parametrize(
    ("url", "problem"),
    [
        ("ftp://8.8.8.8/v1", "http:// or https://"),
        ("file:///etc/passwd", "http:// or https://"),
        ("http://user:pw@8.8.8.8/v1", "user or password"),
        ("http://8.8.8.8/v1?x=1", "query string"),
        ("http://8.8.8.8/v1#top", "fragment"),
        ("http:///v1", "no host"),
        ("http://8.8.8.8\\@10.0.0.1/v1", "backslash"),
        ("http://0.0.0.0:8000/v1", "not a unicast host address"),
        ("http://[fe80::1]/v1", "link-local"),
        ("http://[64:ff9b::a00:1]/v1", "10.0.0.1 is a private"),
        ("http://[2002:a00:1::1]/v1", "10.0.0.1 is a private"),
        ("http://192.168.1.10:11434/v1", "private"),
        ("http://172.17.0.1:8000/v1", "private"),
        ("http://100.64.0.1/v1", "private"),
        ("http://2130706433/v1", "resolves to 127.0.0.1 is a loopback"),
        ("http://localhost:8000/v1", "loopback"),
        ("https://8.8.8.8/v1", None),
        ("https://[2001:4860:4860::8888]/v1", None),
    ],
)
def test_the_policy_without_private_networks(settings, url, problem):
    settings.ENDPOINT_ALLOWED_PRIVATE_NETWORKS = []
    found = urlpolicy.url_problem(url)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found, found


def test_allowed_networks_open_exactly_what_they_list_and_never_link_local(settings):
    settings.ENDPOINT_ALLOWED_PRIVATE_NETWORKS = ["10.1.2.3/32", "169.254.0.0/16"]
    assert urlpolicy.url_problem("http://10.1.2.3:8000/v1") is None
    assert "private" in urlpolicy.url_problem("http://10.1.2.4:8000/v1")
    assert "link-local" in urlpolicy.url_problem("http://169.254.169.254/v1")
