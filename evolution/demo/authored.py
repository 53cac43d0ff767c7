"""Cassettes written by hand for the demo packs: one line per (role, replay key) answer, in the
cassette format (``evolution.llm.cassette``) without fingerprints, so replay matches by role and
key. Plain Python (no Django): a pack writes its cassette as a script."""

from __future__ import annotations

import json
from pathlib import Path


def write_authored_cassette(
    path: Path, answers: dict[tuple[str, str], str], *, tokens_in: int = 400
) -> int:
    """Write ``answers`` ({(role, key): content}) sorted, token counts estimated (a fixed prompt
    size, the answer's words); returns the number of lines."""
    lines = [
        json.dumps(
            {
                "fingerprint": "",
                "key": key,
                "role": role,
                "response": {
                    "content": content,
                    "tokens_in": tokens_in,
                    "tokens_out": len(content.split()),
                },
            },
            sort_keys=True,
        )
        for (role, key), content in sorted(answers.items())
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return len(lines)
