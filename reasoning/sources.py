"""The reasoning kind's problem source: its judged questions, for review rounds and releases.

Found by ``evolution.sources.autodiscover``; review and releases reach these items only
through it."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from django.db.models import Count, Q, QuerySet

from evolution.sources import ItemFacts, Presentation, ProblemSource, source_register

from .models import ItemStatus, ReasoningCampaign, ReasoningItem


class ReasoningSource(ProblemSource):
    kind = "reasoning"
    label = "reasoning questions"
    item_model_label = "reasoning.ReasoningItem"
    item_related = ("run", "reasoning__campaign", "override_by")

    def campaigns(self) -> QuerySet:
        return ReasoningCampaign.objects.select_related("campaign").order_by(
            "-campaign__created_at"
        )

    def reviewable_campaigns(self) -> QuerySet:
        # Only judged items have an answer to rate and a score a verdict can replace.
        return (
            self.campaigns()
            .annotate(n_judged=Count("items", filter=Q(items__status=ItemStatus.JUDGED)))
            .filter(n_judged__gte=1)
        )

    def campaign_label(self, campaign: ReasoningCampaign) -> str:
        return campaign.campaign.name

    def review_groups(
        self, *, campaign=None, item_ids=None, group_size: int, max_groups: int | None = None
    ) -> list[list[ReasoningItem]]:
        """Per type, judged items sorted by difficulty are dealt round-robin into
        ceil(n / group_size) groups, so each group spans the type's difficulties and group
        sizes differ by at most one. A type with a single item cannot form a group and is left
        out. At most ``max_groups`` groups, taking them type by type."""
        qs = ReasoningItem.objects.filter(status=ItemStatus.JUDGED)
        if campaign is not None:
            qs = qs.filter(reasoning=campaign)
        if item_ids is not None:
            qs = qs.filter(pk__in=item_ids)
        by_type: dict[str, list[ReasoningItem]] = defaultdict(list)
        for item in qs.order_by("reasoning_type", "difficulty", "run__number", "position"):
            by_type[item.reasoning_type].append(item)
        groups: list[list[ReasoningItem]] = []
        for items in by_type.values():
            n_groups = -(-len(items) // group_size)
            dealt = [items[k::n_groups] for k in range(n_groups)]
            groups += [g for g in dealt if len(g) >= 2]
        return groups[:max_groups] if max_groups else groups

    def review_refusal(self, item: ReasoningItem) -> str | None:
        if item.status != ItemStatus.JUDGED:
            return f"Reasoning item {item.pk} is {item.status}; only judged items can be reviewed."
        return None

    def group_type(self, items: list[ReasoningItem]) -> str:
        types = {i.reasoning_type for i in items}
        return types.pop() if len(types) == 1 else ""

    def group_order(self, item: ReasoningItem) -> tuple:
        return (item.difficulty, item.run_id, item.position)

    def creator_ids(self, *, item_ids: Iterable[int]) -> set[int]:
        return set(
            ReasoningItem.objects.filter(pk__in=list(item_ids)).values_list(
                "reasoning__campaign__created_by_id", flat=True
            )
        )

    def present(self, item: ReasoningItem) -> Presentation:
        return Presentation(statement=item.question, answer=item.answer)

    def subject_label(self, item: ReasoningItem) -> str:
        return f"{item.reasoning_type} d{item.difficulty} #{item.question_index} (item {item.pk})"

    def export_columns(self, item: ReasoningItem | None) -> dict:
        return {
            "reasoning_item_id": item.pk if item else None,
            "reasoning_type": item.reasoning_type if item else None,
            "reasoning_difficulty": item.difficulty if item else None,
            "judge_score": item.judge_score if item else None,
        }

    def answer_override(self, *, item_id: int, score: float | None, reason: str, user) -> None:
        from .services import item_override_score

        item_override_score(item_id=item_id, score=score, reason=reason, user=user)

    def facts(self, item: ReasoningItem) -> ItemFacts:
        campaign = item.reasoning.campaign
        return ItemFacts(
            pk=item.pk,
            kind=self.kind,
            item_type=item.reasoning_type,
            difficulty=item.difficulty,
            statement=item.question,
            reference_answer=item.answer,
            score=item.score,
            status=item.status,
            status_ok=item.status == ItemStatus.JUDGED,
            provenance={
                "campaign": {"id": campaign.pk, "name": campaign.name},
                "reasoning_item": item.pk,
                "run": item.run.number,
                "question_index": item.question_index,
                "judge_score": item.judge_score,
                "verdicts": [
                    {"judge": v.get("judge"), "score": v.get("score")} for v in item.verdicts or []
                ],
                "override": (
                    {
                        "score": item.override_score,
                        "reason": item.override_reason,
                        "by": item.override_by.username if item.override_by_id else None,
                        "at": item.override_at.isoformat() if item.override_at else None,
                    }
                    if item.override_score is not None
                    else None
                ),
                "score": item.score,
                "similarity": item.similarity,
            },
        )

    def answer_question(self, *, question: str, endpoint, replay_key: str) -> str:
        from .scoring import answer_question

        return answer_question(question=question, endpoint=endpoint, replay_key=replay_key)

    def score_answer(self, **kwargs) -> dict:
        from .scoring import score_answer

        return score_answer(**kwargs)

    def release_candidates(self, *, campaign=None, item_type: str = "") -> QuerySet:
        qs = ReasoningItem.objects.filter(status=ItemStatus.JUDGED).select_related(
            *self.item_related
        )
        if campaign is not None:
            qs = qs.filter(reasoning=campaign)
        if item_type:
            qs = qs.filter(reasoning_type=item_type)
        return qs.order_by("reasoning_type", "difficulty", "run__number", "position")


source_register(ReasoningSource())
