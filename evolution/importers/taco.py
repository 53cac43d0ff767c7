"""TACO (``BAAI/TACO``): the reader lives beside APPS's, whose row format TACO extends."""

from .apps import read_taco, taco_id, taco_record

__all__ = ["read_taco", "taco_id", "taco_record"]
