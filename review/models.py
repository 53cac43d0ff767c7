# Review rounds, ratings, the curation gate and releases live here.
