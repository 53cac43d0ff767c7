"""The reasoning demo pack: the committed cassette is what pack.py writes. (The demo campaign's
run on it is checked in tests/test_demo_database.py, which builds the demo once.)"""

from __future__ import annotations

from reasoning.demo import pack


def test_the_committed_cassette_is_exactly_what_the_pack_writes():
    committed = pack.CASSETTE.read_text(encoding="utf-8").splitlines()
    assert committed == pack.cassette_lines()
