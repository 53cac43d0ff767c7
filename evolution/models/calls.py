from __future__ import annotations

import json

from django.db import models

from .fields import decompress_text


class LLMCall(models.Model):
    """One model exchange, successful or not. Keys are never stored."""

    class Status(models.TextChoices):
        OK = "ok"
        ERROR = "error"  # transport / HTTP failure after retries
        UNPARSABLE = "unparsable"  # answered, but the content could not be parsed
        # Logged before the request leaves and completed after: a row still "sent" is a
        # request the provider may have served (and billed) while its worker died.
        SENT = "sent"

    campaign = models.ForeignKey(
        "Campaign", null=True, blank=True, on_delete=models.SET_NULL, related_name="llm_calls"
    )
    lineage = models.ForeignKey(
        "benchevolver.Lineage",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="llm_calls",
    )
    candidate = models.ForeignKey(
        "benchevolver.Candidate",
        null=True,
        blank=True,
        on_delete=models.SET_NULL,
        related_name="llm_calls",
    )
    role = models.CharField(max_length=30)
    endpoint = models.ForeignKey(
        "ModelEndpoint", null=True, on_delete=models.SET_NULL, related_name="calls"
    )
    endpoint_name = models.CharField(max_length=100, blank=True)
    template = models.CharField(max_length=100, blank=True)
    template_version = models.CharField(max_length=20, blank=True)
    request_z = models.BinaryField(null=True, blank=True)
    response_z = models.BinaryField(null=True, blank=True)
    tokens_in = models.PositiveIntegerField(default=0)
    tokens_out = models.PositiveIntegerField(default=0)
    cost = models.DecimalField(max_digits=12, decimal_places=6, default=0)
    latency_ms = models.PositiveIntegerField(default=0)
    tries = models.PositiveSmallIntegerField(default=1)
    http_status = models.PositiveSmallIntegerField(null=True, blank=True)
    status = models.CharField(max_length=12, choices=Status.choices)
    error = models.TextField(blank=True)
    replayed = models.BooleanField(default=False)
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["id"]
        indexes = [models.Index(fields=["campaign", "role"])]

    def __str__(self):
        return f"{self.role} via {self.endpoint_name} ({self.status})"

    @property
    def request_text(self) -> str:
        return decompress_text(self.request_z)

    @property
    def response_text(self) -> str:
        return decompress_text(self.response_z)

    @property
    def answer_text(self) -> str:
        """What the model answered: the message content of the stored response (a chat
        completion, or a cassette's recorded exchange), else the response as stored (an error
        body, a response that holds no content)."""
        text = self.response_text
        try:
            data = json.loads(text)
        except ValueError:
            return text
        if not isinstance(data, dict):
            return text
        content = data.get("content")
        if content is None:
            try:
                content = data["choices"][0]["message"]["content"]
            except (KeyError, IndexError, TypeError):
                return text
        return content if isinstance(content, str) else text
