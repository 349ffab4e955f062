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


def state(**kw):
    base = dict(pool="a", capacity=8, allocated=4, project="nlp", deserved=2, limit=4, project_allocated=0)
    return forecast.PoolState(**{**base, **kw})


def test_the_forecast_says_each_of_kais_outcomes():
    assert forecast.forecast(state(), 1, preemptible=True)["action"] == "start"
    assert forecast.forecast(state(project_allocated=2), 1, preemptible=True)["action"] == "start-over-quota"
    assert forecast.forecast(state(project_allocated=2), 1, preemptible=False)["waitingFor"] == \
        "NonPreemptibleOverQuota"
    assert forecast.forecast(state(project_allocated=4), 1, preemptible=True)["waitingFor"] == "ProjectLimit"
    assert forecast.forecast(state(department="r", department_limit=8, department_allocated=8), 1,
                             preemptible=True)["waitingFor"] == "DepartmentLimit"
    full = state(allocated=8, over_quota=[("cv", "cv-1", 1.0), ("cv", "cv-2", 2.0)])
    said = forecast.forecast(full, 2, preemptible=True)
    assert said["action"] == "reclaim" and said["victims"] == [{"project": "cv", "workload": "cv-2", "gpus": 2.0}]
    waits = forecast.forecast(state(allocated=8, project_allocated=2, waiting=["w1"]), 1, preemptible=True)
    assert waits["waitingFor"] == "Capacity" and waits["behind"] == ["w1"]
