"""BenchEvolver (paper 000) as a method on the platform, shaped like every other method:
``kind.py`` (its declared graph), ``stages/<stage>.py`` (the database side of each stage),
``engine/`` (pure logic, one module per stage), ``prompts/`` (templates), ``services.py``
(creating a campaign, advancing a lineage)."""
