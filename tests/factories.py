"""factory_boy factories for every model (tests build data through these)."""

from __future__ import annotations

import factory
from django.contrib.auth import get_user_model

from accounts.models import APIToken
from evolution import models as m
from evolution.benchevolver import models as bm
from evolution.measurement import models as measurement


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)

    username = factory.Sequence(lambda n: f"user{n}")
    password = factory.django.Password("pw-123456")


class APITokenFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = APIToken

    user = factory.SubFactory(UserFactory)
    name = "script"
    token_hash = factory.Sequence(lambda n: f"{n:064d}")
    prefix = "abcdefgh"


class ProblemFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Problem

    title = factory.Sequence(lambda n: f"Problem {n}")
    statement = "Read two integers a and b and print a + b."
    reference_solution = "a, b = map(int, input().split())\nprint(a + b)\n"
    harness = "stdio"
    origin_dataset = "test"
    origin_id = factory.Sequence(lambda n: f"t{n}")
    origin_difficulty = "easy"


class EvolvedProblemFactory(ProblemFactory):
    kind = "evolved"
    method = "benchevolver"
    origin_id = ""
    parent = factory.SubFactory(ProblemFactory)
    lineage_root = factory.LazyAttribute(lambda o: o.parent.lineage_root or o.parent)
    lineage_depth = factory.LazyAttribute(lambda o: o.parent.lineage_depth + 1)


class TestCaseFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.TestCase

    __test__ = False
    problem = factory.SubFactory(ProblemFactory)
    tier = "small"
    ordinal = factory.Sequence(lambda n: n)
    hidden = True
    input_text = "1 2\n"
    output_text = "3\n"


class ProblemSetFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.ProblemSet
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"set-{n}")

    @factory.post_generation
    def problems(self, create, extracted, **kwargs):
        if create and extracted:
            self.problems.add(*extracted)


class ModelEndpointFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.ModelEndpoint

    name = factory.Sequence(lambda n: f"endpoint-{n}")
    provider = "openai"
    base_url = "http://127.0.0.1:9/v1"
    model = "test-model"
    concurrency_limit = 4
    timeout_s = 30
    max_retries = 2


class PanelFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Panel

    name = factory.Sequence(lambda n: f"panel-{n}")


class PanelMemberFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.PanelMember

    panel = factory.SubFactory(PanelFactory)
    endpoint = factory.SubFactory(ModelEndpointFactory)
    attempts = 4


class CampaignFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.Campaign

    name = factory.Sequence(lambda n: f"campaign-{n}")
    seed_set = factory.SubFactory(ProblemSetFactory)
    evolver = factory.SubFactory(ModelEndpointFactory)
    panel = factory.SubFactory(PanelFactory)


class LineageFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = bm.Lineage

    campaign = factory.SubFactory(CampaignFactory)
    seed = factory.SubFactory(ProblemFactory)
    parent = factory.SelfAttribute("seed")
    position = factory.Sequence(lambda n: n)


class CandidateFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = bm.Candidate

    lineage = factory.SubFactory(LineageFactory)
    round = factory.Sequence(lambda n: n + 1)
    parent = factory.SelfAttribute("lineage.seed")
    code = "print(int(input()) * 2)\n"
    statement = "Print twice the input."
    family = "doubling"


class SolverAttemptFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = bm.SolverAttempt

    lineage = factory.SubFactory(LineageFactory)
    endpoint = factory.SubFactory(ModelEndpointFactory)
    attempt_index = factory.Sequence(lambda n: n)
    verdict = "AC"


class LLMCallFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = m.LLMCall

    role = "mutator"
    status = "ok"
    endpoint = factory.SubFactory(ModelEndpointFactory)
    endpoint_name = factory.SelfAttribute("endpoint.name")


class GlobalMemoryEntryFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = bm.GlobalMemoryEntry

    campaign = factory.SubFactory(CampaignFactory)
    candidate = factory.SubFactory(CandidateFactory)
    family = "doubling"
    summary = "doubled the answer"


class MeasurementFactory(factory.django.DjangoModelFactory):
    """A completed shared panel measurement (the stage that makes them is tested in
    tests/evolution/measurement)."""

    class Meta:
        model = measurement.Measurement

    problem = factory.SubFactory(ProblemFactory)
    panel = factory.SubFactory(PanelFactory)
    plan = factory.LazyFunction(list)
    state = "completed"
