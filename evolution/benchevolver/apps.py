from django.apps import AppConfig


class BenchEvolverConfig(AppConfig):
    """BenchEvolver, the evolution app's own method, installed as an app of its own (label
    ``benchevolver``) so that its kind (``kind.py``), its templates and its static files are
    found where they live. Its tables (``models.py``) keep the names they had when they were the
    evolution app's (``evolution_lineage`` ...); its pages keep the ``evolution:`` URL names."""

    name = "evolution.benchevolver"
    label = "benchevolver"
    verbose_name = "BenchEvolver"
