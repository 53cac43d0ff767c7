"""This folder's fixtures. They are defined in helpers.py, beside the builders other folders
import from there."""

from .helpers import frozen, frozen_tx, published  # noqa: F401
