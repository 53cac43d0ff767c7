"""The abstract stream row lives with the models (``evolution.models.workstream``), below the
runner that advances it; kinds import it from here or from there."""

from evolution.models.workstream import WorkStream

__all__ = ["WorkStream"]
