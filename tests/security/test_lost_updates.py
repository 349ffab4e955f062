"""Concurrent writers never lose an accepted change (security round 3, S15 and S16): several platform admins PATCH
one project's node-pool quotas, or one policy, at the same moment, each changing a different part; every 200
is in the result. Each writer is a thread with its own client and database connection; the suite runs them on its
own database — PostgreSQL in CI (`make test` there), SQLite here, whose IMMEDIATE transactions serialise writers
as PostgreSQL's row locks do, so the same assertions hold and fail on both when the read is not under the lock."""

import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from django.db import connection

from studio.models import NodePool
from tests.conftest import bearer_client

pytestmark = pytest.mark.django_db(transaction=True)
WRITERS = 4
ROUNDS = 5


def at_once(calls):
    """Run each call in its own thread, all released together; their answers, in order."""
    barrier = threading.Barrier(len(calls))

    def run(call):
        try:
            barrier.wait(timeout=30)
            return call()
        finally:
            connection.close()  # this thread's connection

    with ThreadPoolExecutor(len(calls)) as pool:
        return list(pool.map(run, calls))


@pytest.fixture
def admins(org):
    """One client per writer, each with its own token (a browser tab, a script)."""
    return [bearer_client(org.users.platform_admin) for _ in range(WRITERS)]


def test_concurrent_node_pool_quota_patches_keep_every_change(admins, org):
    pools = [NodePool.objects.create(cluster=org.cluster, name=f"pool-{n}") for n in range(WRITERS)]
    url = f"/api/v1/org-unit/projects/{org.a.pk}/resources"
    for round_ in range(ROUNDS):
        assert admins[0].put(url, [], format="json").status_code == 200

        def writer(n, round_=round_):
            body = [{"nodePool": {"name": pools[n].name}, "gpu": {"deserved": n + round_, "limit": 10}}]
            return admins[n].patch(url, body, format="json")

        answers = at_once([lambda n=n: writer(n) for n in range(WRITERS)])
        assert [a.status_code for a in answers] == [200] * WRITERS, [a.content[:300] for a in answers]
        project = admins[0].get(f"/api/v1/org-unit/projects/{org.a.pk}").json()
        stored = {r["nodePool"]["name"]: r["gpu"]["deserved"] for r in project["resources"]}
        assert stored == {pools[n].name: n + round_ for n in range(WRITERS)}, f"round {round_}: {stored}"
        # The project's totals are the sums over its pools, written with them.
        assert project["totalResources"]["gpuQuota"] == sum(n + round_ for n in range(WRITERS)), project


# A different rule for each writer, in the trainings policy of project A.
RULES = [
    {"compute": {"gpuDevicesRequest": {"max": 2}}},
    {"security": {"runAsGid": {"min": 10}}},
    {"image": {"required": True}},
    {"compute": {"cpuCoreRequest": {"max": 8}}},
]
META = {"name": "alpha-trainings", "scope": "project"}


def _rules(admin, org) -> dict:
    body = admin.get(f"/api/v2/policy/trainings?scope=project&projectId={org.a.pk}").json()
    return (body.get("policy") or {}).get("rules") or {}


def test_concurrent_policy_patches_keep_every_rule(admins, org):
    meta = {**META, "projectId": org.a.pk}
    for round_ in range(ROUNDS):
        # The unit has its policy (with one rule of its own); each writer adds another rule.
        base = {"meta": meta, "policy": {"rules": {"storage": {"nfs": {"instances": {"canAdd": False}}}}}}
        assert admins[0].put("/api/v2/policy/trainings", base, format="json").status_code == 200
        answers = at_once([
            lambda n=n: admins[n].patch("/api/v2/policy/trainings", {"meta": meta, "policy": {"rules": RULES[n]}},
                                        format="json")
            for n in range(WRITERS)])
        assert [a.status_code for a in answers] == [200] * WRITERS, [a.content[:300] for a in answers]
        rules = _rules(admins[0], org)
        missing = [rule for rule in RULES if not _contains(rules, rule)]
        assert not missing and _contains(rules, base["policy"]["rules"]), f"round {round_}: lost {missing}"


def test_concurrent_first_policy_patches_are_each_kept_or_refused(admins, org):
    """With no policy yet, the writers race to create it: each answers 200 (and its rule is kept) or 409 (and
    the writer is told to read and apply again) — never a 200 whose rule is gone."""
    meta = {**META, "projectId": org.b.pk}
    answers = at_once([
        lambda n=n: admins[n].patch("/api/v2/policy/trainings", {"meta": meta, "policy": {"rules": RULES[n]}},
                                    format="json")
        for n in range(WRITERS)])
    assert {a.status_code for a in answers} <= {200, 409}, [a.content[:300] for a in answers]
    body = admins[0].get(f"/api/v2/policy/trainings?scope=project&projectId={org.b.pk}").json()
    rules = body["policy"]["rules"]
    for answer, rule in zip(answers, RULES, strict=True):
        assert _contains(rules, rule) == (answer.status_code == 200), (answer.status_code, rule, rules)


def _contains(tree: dict, part: dict) -> bool:
    for key, value in part.items():
        if isinstance(value, dict):
            if not isinstance(tree.get(key), dict) or not _contains(tree[key], value):
                return False
        elif tree.get(key) != value:
            return False
    return True
