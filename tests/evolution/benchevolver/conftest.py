"""This folder's fixtures. They are defined in helpers.py, beside the builders other folders
import from there."""

from .helpers import fake_server  # noqa: F401
