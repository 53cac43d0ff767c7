"""The per-user API tokens: the bottom of the house holds who may act, roles and tokens alike."""

import hashlib
import secrets

from django.conf import settings
from django.db import models


def _hash_token(raw: str) -> str:
    return hashlib.sha256(raw.encode()).hexdigest()


class APIToken(models.Model):
    """A per-user bearer token for scripts. Only its hash is stored."""

    user = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.CASCADE, related_name="api_tokens"
    )
    name = models.CharField(max_length=100)
    token_hash = models.CharField(max_length=64, unique=True)
    prefix = models.CharField(max_length=8)
    created_at = models.DateTimeField(auto_now_add=True)
    last_used_at = models.DateTimeField(null=True, blank=True)

    class Meta:
        # The table the project made when tokens were benchapp's (migration accounts 0001 moved
        # the model here without touching it).
        db_table = "benchapp_apitoken"

    def __str__(self):
        return f"{self.user} / {self.name} ({self.prefix}…)"

    @classmethod
    def issue(cls, *, user, name: str) -> tuple["APIToken", str]:
        raw = "bf_" + secrets.token_urlsafe(32)
        token = cls.objects.create(
            user=user, name=name, token_hash=_hash_token(raw), prefix=raw[3:11]
        )
        return token, raw

    @classmethod
    def find(cls, raw: str) -> "APIToken | None":
        return cls.objects.select_related("user").filter(token_hash=_hash_token(raw)).first()
