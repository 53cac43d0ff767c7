import pickle
import zlib

import pytest

from evolution.importers.safe_pickle import (
    UnsafePickleError,
    bounded_zlib_decompress,
    safe_pickle_loads,
)


class _RunsCommand:
    """Unpickling an instance with plain pickle calls os.system: the classic payload."""

    def __reduce__(self):
        import os

        return (os.system, ("touch /tmp/should-never-exist",))


def test_it_returns_plain_json_shaped_data_unchanged():
    value = {"a": [1, 2.5, "x", None, True, {"b": []}], "c": "ünïcode"}
    assert safe_pickle_loads(pickle.dumps(value)) == value


@pytest.mark.parametrize("protocol", range(pickle.HIGHEST_PROTOCOL + 1))
def test_it_refuses_a_pickle_that_would_call_os_system(protocol):
    payload = pickle.dumps(_RunsCommand(), protocol=protocol)
    with pytest.raises(
        UnsafePickleError, match=r"refused: pickle references a global \(\w+\.system\)"
    ):
        safe_pickle_loads(payload)


def test_it_refuses_a_builtins_eval_payload_without_running_it(tmp_path):
    marker = tmp_path / "ran"
    code = f"open({str(marker)!r}, 'w').write('x')"
    # Hand-written protocol-0 pickle: builtins.eval(code)
    payload = b"cbuiltins\neval\n(V" + code.encode() + b"\ntR."
    with pytest.raises(UnsafePickleError, match=r"builtins\.eval"):
        safe_pickle_loads(payload)
    assert not marker.exists()


@pytest.mark.parametrize(
    "value, kind",
    [((1, 2), "tuple"), ({1, 2}, "set"), (b"raw", "bytes"), (frozenset(), "frozenset")],
)
def test_it_refuses_containers_that_json_cannot_hold(value, kind):
    with pytest.raises(UnsafePickleError, match=kind):
        safe_pickle_loads(pickle.dumps(value))


def test_it_refuses_non_string_dict_keys():
    with pytest.raises(UnsafePickleError, match="dict key of type int"):
        safe_pickle_loads(pickle.dumps({1: "a"}))


def test_it_refuses_a_list_that_contains_itself():
    looped: list = []
    looped.append(looped)
    with pytest.raises(UnsafePickleError, match="self-referencing"):
        safe_pickle_loads(pickle.dumps(looped))


def test_it_accepts_deep_nesting_without_recursing():
    # pickle.dumps itself recurses, so build the stream by hand: 50k EMPTY_LIST/APPEND pairs.
    payload = b"\x80\x02" + b"]" * 50_001 + b"a" * 50_000 + b"."
    value = safe_pickle_loads(payload)
    depth = 0
    while value:
        value = value[0]
        depth += 1
    assert depth == 50_000


def test_it_refuses_a_truncated_stream():
    with pytest.raises(UnsafePickleError, match="not a readable pickle"):
        safe_pickle_loads(pickle.dumps(["abc"])[:-3])


def test_bounded_decompress_refuses_output_over_the_limit():
    bomb = zlib.compress(b"\0" * 10_000_000)
    with pytest.raises(ValueError, match="more than 1000 bytes"):
        bounded_zlib_decompress(bomb, limit=1000)
    assert bounded_zlib_decompress(zlib.compress(b"abc")) == b"abc"
