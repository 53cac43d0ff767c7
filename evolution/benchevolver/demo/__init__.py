"""BenchEvolver's offline demo: the pack (``pack``: six seeds and the authored answers of one
demo campaign, one story a seed in ``stories/``), its cassette and its seed file."""
