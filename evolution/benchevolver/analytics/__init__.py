"""Campaign analytics: the trajectory heatmap (BenchEvolver Figure 10) and the campaign charts
(Figures 2-4, 8, 9 and Table 1), computed from a campaign's own rows.

- ``heatmap`` and ``charts`` are pure functions over plain dicts (no database), so every number
  a chart shows can be tested without building a campaign.
- ``selectors`` reads the rows those functions need with a constant number of SQL queries,
  whatever the campaign's size, and caches each chart's data on a fingerprint of the campaign
  that changes whenever the campaign advances.
- ``reviews`` says where per-problem review aggregates come from (``ReviewAggregates``, which
  the project's URLconf passes down from the review app; without it nothing is reviewed).
- ``tables`` turns each chart's data into CSV rows.
"""
