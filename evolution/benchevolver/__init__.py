"""BenchEvolver as a method on the platform: its declared kind (``kind.py``). Its stages still
live in ``evolution/services/steps.py`` (database side) and ``evolution/pipeline/`` (pure logic);
they move here as ``stages/<stage>.py`` next."""
