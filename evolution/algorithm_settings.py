"""The one base of every campaign kind's algorithm settings.

A kind's settings are a frozen dataclass whose fields are the settings with their defaults;
deriving from ``AlgorithmSettings`` gives it, once for every kind: validation of a submitted
dict (unknown keys refused, values coerced to the default's type, inclusive bounds checked,
then the kind's own cross-field rules in ``validate``), one ``ValidationError`` naming every
bad key at once, ``to_dict`` for storage, and the table the campaign page shows.

Every setting also declares where its default comes from (``SOURCES``): a place in the kind's
source document (its paper's table or section), or the project's own choice (``PROJECT``). A
default is the document's only where the document gives that value; the creation form, the
campaign pages and the docs mark each one so.

Message wording is part of each kind's contract with its users (forms and the API show it),
so the wording is a class attribute a kind may set.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import asdict, fields
from typing import Any, ClassVar

from django.core.exceptions import ValidationError

TRUE_WORDS = ("true", "1", "on", "yes")
FALSE_WORDS = ("false", "0", "off", "no")

#: the source of a default the kind's document does not give: the project's own choice
PROJECT = "BenchForge"


class AlgorithmSettings:
    """Mixin for a ``@dataclass(frozen=True)`` of settings (see the module docstring)."""

    #: the kind's name in messages ("EvoSyn" -> "unknown EvoSyn setting 'x'")
    LABEL: ClassVar[str] = ""
    #: what each setting means, shown next to it on forms and the campaign page
    HELP: ClassVar[Mapping[str, str]] = {}
    #: what the kind's source document is ("paper", "design document"), in source marks
    SOURCE_NAME: ClassVar[str] = "paper"
    #: where each setting's default comes from: the place in the source document that gives
    #: the value ("Table 5, LCB column", "§4.2"), or PROJECT where the document gives none
    SOURCES: ClassVar[Mapping[str, str]] = {}
    UNKNOWN_MESSAGE: ClassVar[str] = "unknown {label} setting {key!r}"
    #: {former name: current name} of renamed settings: the former name is refused with the new
    #: one named (stored campaigns were migrated; a client still sending it learns the new one)
    RENAMED: ClassVar[Mapping[str, str]] = {}
    BOUNDS_MESSAGE: ClassVar[str] = "{name} must be in [{low}, {high}]"
    # {name: (low, high)} inclusive, for numeric settings; subclasses set it.
    _BOUNDS: ClassVar[Mapping[str, tuple[Any, Any]]] = {}

    @classmethod
    def names(cls) -> list[str]:
        return [f.name for f in fields(cls)]

    @classmethod
    def defaults(cls) -> dict:
        return asdict(cls())

    @classmethod
    def coerce(cls, name: str, raw, default):
        """``raw`` as the type of ``default``; ValueError / TypeError saying what was wrong."""
        if isinstance(default, bool):
            if isinstance(raw, bool):
                return raw
            if isinstance(raw, str) and raw.lower() in TRUE_WORDS + FALSE_WORDS:
                return raw.lower() in TRUE_WORDS
            raise ValueError(f"{name} must be true or false")
        if isinstance(default, int):
            if isinstance(raw, bool) or (isinstance(raw, float) and not raw.is_integer()):
                raise ValueError(f"{name} must be an integer")
            try:
                return int(raw)
            except (TypeError, ValueError):
                raise ValueError(f"{name} must be an integer") from None
        if isinstance(default, float):
            if isinstance(raw, bool):
                raise ValueError(f"{name} must be a number")
            try:
                return float(raw)
            except (TypeError, ValueError):
                raise ValueError(f"{name} must be a number") from None
        if isinstance(default, str):
            if not isinstance(raw, str):
                raise ValueError(f"{name} must be a string")
            return raw.strip()
        return raw

    @classmethod
    def from_dict(cls, data: Mapping | None):
        """Validate ``data`` (partial: missing keys take defaults). Raises ValidationError
        mapping each bad key to its messages; every bad key is reported at once."""
        data = dict(data or {})
        names = cls.names()
        errors: dict[str, list[str]] = {}
        for key in data:
            if key in cls.RENAMED:
                errors.setdefault(key, []).append(
                    f"{key!r} is now called {cls.RENAMED[key]!r}: {cls.HELP[cls.RENAMED[key]]}"
                )
            elif key not in names:
                errors.setdefault(key, []).append(
                    cls.UNKNOWN_MESSAGE.format(label=cls.LABEL, key=key)
                )
        defaults = cls()
        values = {}
        for name in names:
            if name not in data:
                continue
            try:
                values[name] = cls.coerce(name, data[name], getattr(defaults, name))
            except (TypeError, ValueError) as exc:
                errors.setdefault(name, []).append(str(exc))
        result = cls(**values)
        # Ranges run on the values that did parse (a bad one keeps its default meanwhile), so
        # one answer names every bad key.
        for name, (low, high) in cls._BOUNDS.items():
            if name in errors:
                continue
            if not low <= getattr(result, name) <= high:
                errors.setdefault(name, []).append(
                    cls.BOUNDS_MESSAGE.format(name=name, low=low, high=high)
                )
        result.validate(errors)
        if errors:
            raise ValidationError(errors)
        return result

    def validate(self, errors: dict[str, list[str]]) -> None:
        """The kind's rules across settings: append messages to ``errors[key]``."""

    def to_dict(self) -> dict:
        return asdict(self)

    @classmethod
    def shown(cls, name: str, value):
        """How the campaign page shows a value (a kind may shorten structured ones)."""
        return value

    @classmethod
    def from_paper(cls, name: str) -> bool:
        """Whether the default of ``name`` is the source document's (a setting without a
        declared source counts as the project's)."""
        return cls.SOURCES.get(name, PROJECT) != PROJECT

    @classmethod
    def source(cls, name: str) -> str:
        """How forms, pages and docs mark the default of ``name``: "paper (Table 5)" (the
        document's name and where it gives the value) or "BenchForge" (the project's own)."""
        if not cls.from_paper(name):
            return PROJECT
        return f"{cls.SOURCE_NAME} ({cls.SOURCES[name]})"

    @classmethod
    def table(cls, raw: Mapping | None) -> list[dict]:
        """Rows for the campaign page: name, value, default, changed, help, and the default's
        source (``source``; ``from_paper`` whether it is the document's)."""
        current, defaults = cls.from_dict(raw), cls()
        rows = []
        for name in cls.names():
            value = cls.shown(name, getattr(current, name))
            default = cls.shown(name, getattr(defaults, name))
            rows.append(
                {
                    "name": name,
                    "value": value,
                    "default": default,
                    "changed": value != default,
                    "help": cls.HELP.get(name, ""),
                    "source": cls.source(name),
                    "from_paper": cls.from_paper(name),
                }
            )
        return rows
