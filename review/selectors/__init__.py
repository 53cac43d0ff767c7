"""Reads for blinded review.

Two families live here and must not mix:

- ``reviewer_*`` selectors build the ONLY data a reviewer ever receives. They return frozen
  dataclasses made of opaque ids, rendered statements, limits and public examples. They never
  return a model instance, so a template or schema cannot reach ``problem.title`` by accident.
  ``REVIEWER_FIELDS`` lists every field name they may carry; tests pin it.
- the other selectors serve curators and see everything.
"""

from __future__ import annotations

from .curator import (  # noqa: F401 - the package's names, as the module had them
    AgreementRow,
    ItemAggregate,
    ReviewerProgress,
    ScreenPanel,
    adjudication_reviews,
    adjudication_screens,
    round_adjudications,
    round_agreement,
    round_export_rows,
    round_get,
    round_item_aggregates,
    round_list,
    round_progress,
    round_understaffed_groups,
    tag_list,
)
from .groups import (  # noqa: F401 - the package's names, as the module had them
    LABELS,
    MAX_EXAMPLES,
    MAX_GROUP,
    REVIEW_STATUSES,
    ProblemFilter,
    coding_campaign_choice_list,
    coding_group_plan,
    coding_problem_choice,
    lineage_choice_list,
    lineage_list,
    lineage_problem_list,
    lineage_source,
    question_source,
    reasoning_choice_list,
    reasoning_group_plan,
    root_problem_list,
)
from .reviewer import (  # noqa: F401 - the package's names, as the module had them
    CODING_DRAFT_FIELDS,
    REASONING_DRAFT_FIELDS,
    REVIEWER_FIELDS,
    ReviewerDraft,
    ReviewerDraftState,
    ReviewerExample,
    ReviewerGroup,
    ReviewerProblem,
    ReviewerQuestion,
    ReviewerQueueEntry,
    ReviewerTag,
    blind_title,
    items_under_blind_review,
    problems_under_blind_review,
    rates_blind_now,
    reviewer_assignment,
    reviewer_draft_state,
    reviewer_group,
    reviewer_queue,
    reviewer_tag_suggestions,
)
