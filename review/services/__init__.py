"""Writes for blinded review. Every function is keyword-only and atomic where it matters."""

from __future__ import annotations

from .adjudication import (  # noqa: F401 - the package's names, as the module had them
    ANSWER_OVERRIDE_SCORES,
    DISAGREEMENT_GAP,
    OVERRIDABLE,
    SETTLED_BY,
    adjudication_refresh,
    adjudication_resolve,
    reasoning_answer_override,
    score_override_create,
)
from .drafts import (  # noqa: F401 - the package's names, as the module had them
    MAX_ELAPSED_PER_SAVE,
    AlreadySubmitted,
    DraftConflict,
    DraftResult,
    SubmitResult,
    assignment_open,
    assignment_save_draft,
    assignment_submit,
)
from .rounds import (  # noqa: F401 - the package's names, as the module had them
    MAX_GROUP,
    MIN_GROUP,
    GroupSource,
    group_source_from_lineage,
    group_source_from_root,
    round_assign,
    round_create,
    round_set_status,
)
from .tags import (  # noqa: F401 - the package's names, as the module had them
    tag_approve,
    tag_merge,
    tag_resolve,
    tag_vocabulary_load,
    tags_resolve,
)
