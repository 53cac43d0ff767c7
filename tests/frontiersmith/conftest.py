"""This folder's fixtures. They are defined in helpers.py, beside the builders other folders
import from there."""

from .helpers import script, world  # noqa: F401
