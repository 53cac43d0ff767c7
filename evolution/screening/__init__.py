"""The contamination screen: is an evolved or synthesized problem new, or a public one recalled?

Every problem of every imported corpus (the seeds the importers create) is in a similarity
index over its statement and its reference solution: MinHash signatures (``datasketch``) of
word shingles of the normalised statement and of token shingles of the normalised program
(``shingles``), stored in the database (``models.IndexedProblem``) so each import adds its own
problems and ``manage.py screening_index --rebuild`` redoes all of them. ``index`` keeps the
signatures of one process in two matrices and answers a query by comparing it with every row.
``services`` screens a problem (BenchEvolver at acceptance, the shared panel measurement for
X-Coder, EvoSyn and FrontierSmith, the curation gate for any candidate left unscreened) and
stores its nearest public problems (``models.ProblemScreen``). docs/screening.md.
"""
