"""What the commands that fill an admin page's form (``endpoint``, ``panel``) say when the form
refuses: each problem under the command-line option that set the field."""

from __future__ import annotations

from django.core.management.base import CommandError


def refusal(form, *, options: dict[str, str], whole: str) -> CommandError:
    """``options``: form field -> the option that sets it (others are named ``--field``);
    ``whole``: what a problem of the whole form is said of."""

    def where(field: str) -> str:
        if field == "__all__":
            return whole
        return "--" + options.get(field, field).replace("_", "-")

    return CommandError(
        "; ".join(f"{where(f)}: {' '.join(errors)}" for f, errors in form.errors.items())
    )
