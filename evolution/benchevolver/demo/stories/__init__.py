"""The demo pack's stories, one module a seed (``pack.STORIES``): each names its seed
(``SEED``), holds its programs and statements, and writes its answers (``answers(put, panel)``).
"""
