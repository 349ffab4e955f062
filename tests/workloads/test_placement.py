"""Where a workload is placed among its allowed pools (workloads/placement.py) and what the scheduler would do with
it there (workloads/forecast.py): pure rules, each case one of KAI's."""

from decimal import Decimal as D

from workloads import forecast, placement


def pool(name, deserved, limit, held, **kw):
    return placement.PoolQuota(name=name, deserved=D(deserved), limit=None if limit is None else D(limit),
                               held=D(held), **kw)


def test_the_first_pool_within_deserved_then_over_quota_then_where_it_waits():
    a, b = pool("a", 2, 4, 2), pool("b", 6, 6, 0)
    assert placement.choose([a, b], D(1), "nlp")[:2] == (b, "deserved")  # a is past its deserved
    a, b = pool("a", 2, 4, 2), pool("b", 0, 1, 0)
    assert placement.choose([a, b], D(1), "nlp")[:2] == (a, "over-quota")  # first within its limit
    a, b = pool("a", 2, 4, 4), pool("b", 0, 1, 1)
    assert placement.choose([a, b], D(1), "nlp")[:2] == (a, "waits")


def test_none_when_no_pool_could_ever_hold_it_naming_each_pool():
    a = pool("a", 2, 4, 0)
    b = pool("b", 6, None, 0, department="research", department_limit=D(5))
    c = pool("c", 8, None, 0, largest_node=4)
    chosen, _, why = placement.choose([a, b, c], D(6), "nlp", per_pod=D(6))
    assert chosen is None
    assert why == ("6 GPUs is more than project nlp's limit of 4 in node pool a; 6 GPUs is more than department "
                   "research's limit of 5 in node pool b; each pod asks for 6 GPUs and the largest node of node "
                   "pool c has 4")


def project(name, deserved, limit, running=(), waiting=0.0, department="r", weight=1.0):
    running = [(f"{name}-{i}", g, True) for i, g in enumerate(running)]
    return forecast.ProjectInPool(name=name, department=department, deserved=deserved, limit=limit, weight=weight,
                                  requested=sum(g for _, g, _ in running) + waiting, running=running)


def test_the_forecast_says_each_of_kais_outcomes():
    def say(me, others=(), gpus=1, capacity=8, preemptible=True, **kw):
        return forecast.forecast(forecast.PoolState(pool="a", capacity=capacity, project=me, others=list(others),
                                                    **kw), gpus, preemptible=preemptible)
    assert say(project("nlp", 2, 4))["action"] == "start"
    assert say(project("nlp", 2, 4, [1, 1]))["action"] == "start-over-quota"
    assert say(project("nlp", 2, 4, [1, 1]), preemptible=False)["waitingFor"] == "NonPreemptibleOverQuota"
    assert say(project("nlp", 2, 4, [1, 1, 1, 1]))["waitingFor"] == "ProjectLimit"
    # The pool full: within its fair share, KAI reclaims from the project furthest over its own (newest first).
    cv = project("cv", 4, 6, [1, 1, 1, 1])
    nlp = project("nlp", 2, 4, [1, 1, 1, 1])
    said = say(cv, [nlp], department_limit=8)  # the department at its limit: reclaimed inside it
    assert said["action"] == "reclaim" and said["victims"] == [{"project": "nlp", "workload": "nlp-3", "gpus": 1}]
    assert forecast.fair_shares([project("cv", 4, 6, [1, 1, 1, 1], waiting=1), nlp], 8) == {"cv": 5.0, "nlp": 3.0}
    # Beyond its fair share, or with nothing over theirs to take: it waits, for the department or for GPUs.
    cv5 = project("cv", 4, 6, [1, 1, 1, 1, 1])
    nlp3 = project("nlp", 2, 4, [1, 1, 1])
    assert say(cv5, [nlp3], department_limit=8)["waitingFor"] == "DepartmentLimit"
    assert say(cv5, [project("nlp", 3, 3, [1, 1, 1], department="other")])["waitingFor"] == "Capacity"
    waits = say(project("nlp", 2, 4, [1]), [project("cv", 7, 8, [1] * 7)], waiting=["w1"])
    assert waits["waitingFor"] == "Capacity" and waits["behind"] == ["w1"]
