"""The step context every kind's stages receive (``<method>/stages/common.py``'s ``Ctx``
subclasses ``StepContext``), with the one ``chat`` every stage asks a model through.

One signature: ``ctx.chat(role, messages, template, key=..., endpoint=..., temperature=...,
max_tokens=..., candidate=...)`` returns the gateway's ``ChatResult``. One replay-key format
(``replay_key``): ``<scope>;<key>;role=<role>``, where the scope is the kind's
(``replay_scope``: BenchEvolver's names the lineage's seed, ``seed=<id>``; the other kinds name
themselves). A cassette recorded under an older format still replays: ``evolution.llm.cassette``
reads its keys through ``key_upgrade``.

What a kind decides, each in one overridable method: the endpoint a role asks
(``endpoint_for``), how a campaign's sampling settings apply to it (``chat_endpoint``), the
temperature when a stage gives none (``default_temperature``), what a call is charged to
(``call_context``), and which failures of a call pause the campaign (``pause_for``: by default
a refusal of the endpoint's configuration; the runner then pauses naming the role and the
endpoint)."""

from __future__ import annotations

from evolution.llm import CallContext, ChatResult, LLMClient, LLMTransportError
from evolution.models import Campaign, ModelEndpoint

from .errors import EndpointUnavailable, configuration_refused


def replay_key(scope: str, key: str, role: str) -> str:
    """The one replay-key format: ``<scope>;<key>;role=<role>``."""
    return f"{scope};{key};role={role}"


class StepContext:
    """The base of every kind's ``Ctx``. A subclass gives ``campaign`` (attribute or property)
    and ``replay_scope``; the rest has a default."""

    campaign: Campaign

    def replay_scope(self) -> str:
        return self.campaign.kind

    def endpoint_for(self, role: str) -> ModelEndpoint:
        """The endpoint ``role`` asks: the campaign's override for the role
        (``Campaign.role_endpoints``), else its evolver."""
        override = (self.campaign.role_endpoints or {}).get(role)
        if override:
            return ModelEndpoint.objects.get(pk=override)
        return self.campaign.evolver

    def chat_endpoint(self, endpoint: ModelEndpoint) -> ModelEndpoint:
        return endpoint

    def default_temperature(self) -> float | None:
        return None

    def call_context(self, candidate=None) -> CallContext:
        return CallContext(campaign_id=self.campaign.pk)

    def pause_for(
        self, exc: LLMTransportError, *, role: str, endpoint: ModelEndpoint
    ) -> EndpointUnavailable | None:
        return configuration_refused(exc, role=role, endpoint=endpoint.name)

    def chat(
        self,
        role: str,
        messages: list[dict],
        template,
        *,
        key: str,
        endpoint: ModelEndpoint | None = None,
        temperature: float | None = None,
        max_tokens: int | None = None,
        candidate=None,
    ) -> ChatResult:
        """Ask ``role`` (on ``endpoint``, else ``endpoint_for(role)``) with ``messages``
        rendered from ``template``; the call is recorded under ``replay_key(scope, key, role)``.
        A failure ``pause_for`` names leaves as ``EndpointUnavailable`` (not an ``LLMError``,
        so stage code that turns a failed call into the item's error lets it through)."""
        endpoint = endpoint or self.endpoint_for(role)
        client = LLMClient(self.chat_endpoint(endpoint), self.call_context(candidate))
        try:
            return client.chat_template(
                messages,
                template,
                role=role,
                replay_key=replay_key(self.replay_scope(), key, role),
                temperature=self.default_temperature() if temperature is None else temperature,
                max_tokens=max_tokens,
            )
        except LLMTransportError as exc:
            down = self.pause_for(exc, role=role, endpoint=endpoint)
            if down is not None:
                raise down from exc
            raise
