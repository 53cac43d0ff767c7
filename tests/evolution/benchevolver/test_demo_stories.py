"""The demo pack is one story a seed (``evolution/benchevolver/demo/stories/``): every seed of
the pack has its story, and a story writes only its own seed's answers, so a newcomer reads
one file to know what the demo campaign does with one seed."""

from __future__ import annotations

from evolution.benchevolver.demo import leaderboard_answers, pack
from evolution.benchevolver.demo.answers import Answers


def test_every_seed_of_the_pack_has_one_story():
    seeds = [story.SEED for story in pack.STORIES]
    assert len(seeds) == len(set(seeds))
    assert set(seeds) == set(pack.STDIO_SEEDS) | set(pack.HUMANEVAL_SEEDS)


def test_a_story_writes_only_its_own_seeds_answers():
    written = {}
    for story in pack.STORIES:
        answers = Answers()
        story.answers(answers.put, answers.panel)
        assert answers.out, story.__name__
        assert {key.split(";", 1)[0] for _, key in answers.out} == {f"seed={story.SEED}"}
        assert not set(answers.out) & set(written), story.__name__  # no answer written twice
        written.update(answers.out)
    # The pack is its stories' answers and the demo release's leaderboard answers, no more.
    assert pack.responses() == {**written, **leaderboard_answers.responses()}
