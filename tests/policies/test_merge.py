"""The pure policy functions: merge of layers (table + property: a narrower scope never loosens), defaults,
and the check of a spec against the effective policy."""

import copy

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from policies import pod_security
from policies.check import check_value, enforce
from policies.fallback import fallback_layer
from policies.merge import Layer, effective
from tests.workloads.seed_bodies import INFERENCE_REQUEST, TRAINING_REQUEST, WORKSPACE_REQUEST

TENANT = {"scope": "tenant"}
DEPARTMENT = {"scope": "department", "departmentId": "1"}
PROJECT = {"scope": "project", "projectId": 1}


def layer(source, label, rules=None, defaults=None):
    return Layer(source=source, label=label, rules=rules or {}, defaults=defaults or {})


def uid(**rule):
    return {"security": {"runAsUid": rule}}


@pytest.mark.parametrize("wider,narrower,expected", [
    ({"min": 1}, {"min": 100}, {"min": 100}),                 # a higher minimum tightens
    ({"min": 100}, {"min": 0}, {"min": 100}),                 # a lower one cannot loosen
    ({"max": 1000}, {"max": 5000}, {"max": 1000}),
    ({"max": 1000}, {"max": 500}, {"max": 500}),
    ({"min": 1}, {"max": 500}, {"min": 1, "max": 500}),       # attributes combine
    ({"canEdit": False}, {"canEdit": True}, {"canEdit": False}),
    ({"canEdit": True}, {"canEdit": False}, {"canEdit": False}),
    ({"step": 10}, {"step": 3}, {"step": 10}),
])
def test_integer_rules_tighten_down_the_scopes(wider, narrower, expected):
    merged = effective("trainings", [layer(TENANT, "tenant", uid(**wider)), layer(PROJECT, "project a", uid(**narrower))])
    assert merged.rules["security.runAsUid"] == expected


@pytest.mark.parametrize("attribute,wider,narrower,expected", [
    ("options", [{"value": "a"}, {"value": "b"}], [{"value": "b"}, {"value": "c"}], [{"value": "b"}]),
    ("required", False, True, True),
    ("required", True, False, True),
])
def test_string_rules_tighten(attribute, wider, narrower, expected):
    rules = lambda value: {"image": {attribute: value}}  # noqa: E731
    merged = effective("workspaces", [layer(TENANT, "tenant", rules(wider)), layer(PROJECT, "p", rules(narrower))])
    assert merged.rules["image"][attribute] == expected


def test_items_rules_tighten_and_locked_add_up():
    rule = lambda **r: {"environmentVariables": {"instances": r}}  # noqa: E731
    merged = effective("trainings", [layer(TENANT, "tenant", rule(canAdd=True, locked=["HOME"])),
                                     layer(PROJECT, "p", rule(canAdd=False, locked=["USER"]))])
    assert merged.rules["environmentVariables.instances"] == {"canAdd": False, "locked": ["HOME", "USER"]}


def test_quantities_compare_as_quantities():
    rule = lambda value: {"compute": {"cpuMemoryLimit": {"max": value}}}  # noqa: E731
    merged = effective("trainings", [layer(TENANT, "tenant", rule("1Gi")), layer(PROJECT, "p", rule("900Mi"))])
    assert merged.rules["compute.cpuMemoryLimit"] == {"max": "900Mi"}
    merged = effective("trainings", [layer(TENANT, "tenant", rule("1Gi")), layer(PROJECT, "p", rule("2G"))])
    assert merged.rules["compute.cpuMemoryLimit"] == {"max": "1Gi"}


def test_the_built_in_default_is_the_one_layer_a_scope_may_loosen():
    merged = effective("trainings", [fallback_layer("trainings"), layer(PROJECT, "project a", uid(min=0))])
    assert merged.rules["security.runAsUid"] == {"min": 0}
    assert merged.origins["security.runAsUid"]["min"].label == "project a"
    # ... but not below a stored tenant rule
    merged = effective("trainings", [fallback_layer("trainings"), layer(TENANT, "tenant", uid(min=1000)),
                                     layer(PROJECT, "project a", uid(min=0))])
    assert merged.rules["security.runAsUid"] == {"min": 1000}
    assert merged.origins["security.runAsUid"]["min"].label == "tenant"


def test_defaults_narrower_wins_unless_a_wider_scope_fixed_the_field():
    tenant = layer(TENANT, "tenant", defaults={"image": "python:3.11", "compute": {"cpuCoreRequest": 1}})
    project = layer(PROJECT, "p", defaults={"image": "python:3.12", "compute": {"cpuMemoryRequest": "1Gi"}})
    merged = effective("trainings", [tenant, project])
    assert merged.defaults == {"image": "python:3.12", "compute": {"cpuCoreRequest": 1, "cpuMemoryRequest": "1Gi"}}
    fixed = layer(TENANT, "tenant", rules={"image": {"canEdit": False}}, defaults={"image": "python:3.11"})
    assert effective("trainings", [fixed, project]).defaults["image"] == "python:3.11"


def test_the_effective_rules_tree_names_the_source_of_each_rule():
    tree = effective("trainings", [fallback_layer("trainings"), layer(PROJECT, "p", uid(min=0))]).rules_tree()
    assert tree["security"]["runAsUid"] == {"min": 0, "sourceOfRule": PROJECT}
    assert tree["security"]["hostNetwork"]["sourceOfRule"] == {"scope": "tenant", "isFallback": True}


# --- the check of a spec ---------------------------------------------------------------------------------

def secure(policy_type, *layers):
    return effective(policy_type, [fallback_layer(policy_type), *layers])


@pytest.mark.parametrize("request_body,policy_type", [
    (INFERENCE_REQUEST, "inferences"), (WORKSPACE_REQUEST, "workspaces"), (TRAINING_REQUEST, "trainings")])
def test_the_seeds_comply_with_the_secure_default_but_for_seed_003s_host_path(request_body, policy_type):
    spec, problems = enforce(policy_type, secure(policy_type), copy.deepcopy(request_body["spec"]))
    expected = [] if policy_type == "inferences" else [
        ("storage.hostPath", "no items may be added (policy: tenant default)")]
    assert problems == expected
    allowed = layer(PROJECT, "p", {"storage": {"hostPath": {"instances": {"canAdd": True}}}})
    if policy_type != "inferences":
        assert enforce(policy_type, secure(policy_type, allowed), request_body["spec"])[1] == []
    for key, value in request_body["spec"].items():  # the seed's own values are kept
        assert spec[key] == value


@pytest.mark.parametrize("security,field,message", [
    ({"runAsUid": 0}, "security.runAsUid", "must be at least 1 (policy: tenant default)"),
    ({"hostNetwork": True}, "security.hostNetwork", "cannot be changed from its default (false) (policy: tenant default)"),
    ({"hostIpc": True}, "security.hostIpc", "cannot be changed from its default (false) (policy: tenant default)"),
    ({"allowPrivilegeEscalation": True}, "security.allowPrivilegeEscalation",
     "cannot be changed from its default (false) (policy: tenant default)"),
    ({"seccompProfileType": "Unconfined"}, "security.seccompProfileType",
     "Unconfined is not allowed: must be one of RuntimeDefault, Localhost (policy: tenant default)"),
])
def test_the_secure_default_refuses_each_escape(security, field, message):
    assert enforce("trainings", secure("trainings"), {"image": "x", "security": security})[1] == [(field, message)]


def test_capabilities_outside_baseline_are_refused_each_named():
    _, problems = enforce("trainings", secure("trainings"), {"image": "x", "security": {
        "capabilities": ["CHOWN", "SYS_ADMIN", "NET_ADMIN"]}})
    assert problems[0][0] == "security.capabilities"
    assert problems[0][1].startswith("SYS_ADMIN, NET_ADMIN are not allowed: must be one of AUDIT_WRITE, CHOWN")


def test_defaults_fill_missing_fields_and_itemized_attributes():
    policy = secure("trainings", layer(TENANT, "tenant", defaults={
        "compute": {"cpuCoreRequest": 0.5},
        "environmentVariables": {"instances": [{"name": "HOME", "value": "/home/user"}]},
        "storage": {"pvc": {"attributes": {"readOnly": True}}}}))
    spec, problems = enforce("trainings", policy, {"image": "x", "compute": {"cpuCoreRequest": 2},
                                                   "storage": {"pvc": [{"claimName": "data", "path": "/data"}]}})
    assert problems == []
    assert spec["compute"] == {"cpuCoreRequest": 2}
    assert spec["environmentVariables"] == [{"name": "HOME", "value": "/home/user"}]
    assert spec["storage"]["pvc"] == [{"claimName": "data", "path": "/data", "readOnly": True}]
    assert spec["security"] == {"allowPrivilegeEscalation": False, "hostIpc": False, "hostNetwork": False}


def test_required_locked_and_attribute_rules_name_the_item():
    policy = secure("trainings", layer(PROJECT, "project a", rules={
        "image": {"required": True},
        "environmentVariables": {"instances": {"locked": ["HOME"]}},
        "storage": {"pvc": {"attributes": {"readOnly": {"canEdit": False}}}},
    }, defaults={"environmentVariables": {"instances": [{"name": "HOME", "value": "/h"}]},
                 "storage": {"pvc": {"attributes": {"readOnly": True}}}}))
    _, problems = enforce("trainings", policy, {
        "environmentVariables": [{"name": "HOME", "exclude": True}],
        "storage": {"pvc": [{"claimName": "a", "path": "/a"}, {"claimName": "b", "path": "/b", "readOnly": False}]}})
    assert sorted(problems) == [
        ("environmentVariables", "HOME cannot be removed (policy: project a)"),
        ("image", "is required (policy: project a)"),
        ("storage.pvc[1].readOnly", "cannot be changed from its default (true) (policy: project a)"),
    ]


# --- property: a narrower scope never loosens ----------------------------------------------------------------

bounds = st.one_of(st.none(), st.integers(-5, 5))
integer_rule = st.fixed_dictionaries({}, optional={
    "min": st.integers(-5, 5), "max": st.integers(-5, 5), "canEdit": st.booleans(), "required": st.booleans()})
option_rule = st.fixed_dictionaries({}, optional={
    "options": st.lists(st.sampled_from(["a", "b", "c"]), unique=True).map(lambda vs: [{"value": v} for v in vs]),
    "canEdit": st.booleans(), "required": st.booleans()})


def rules_of(uid_rule, image_rule):
    return {"security": {"runAsUid": uid_rule}, "image": image_rule}


@settings(max_examples=300, deadline=None)
@given(wider_uid=integer_rule, narrower_uid=integer_rule, wider_image=option_rule, narrower_image=option_rule,
       value=st.one_of(st.none(), st.integers(-6, 6)), image=st.one_of(st.none(), st.sampled_from(["a", "b", "c"])),
       default=st.one_of(st.none(), st.integers(-6, 6)))
def test_whatever_a_narrower_scope_accepts_the_wider_one_accepts_too(wider_uid, narrower_uid, wider_image,
                                                                     narrower_image, value, image, default):
    defaults = {"security": {"runAsUid": default}} if default is not None else {}
    wider = layer(TENANT, "tenant", rules_of(wider_uid, wider_image), defaults)
    narrower = layer(PROJECT, "p", rules_of(narrower_uid, narrower_image))
    spec = {key: v for key, v in (("image", image),) if v is not None}
    if value is not None:
        spec["security"] = {"runAsUid": value}
    _, with_narrower = enforce("workspaces", effective("workspaces", [wider, narrower]), spec)
    _, wider_only = enforce("workspaces", effective("workspaces", [wider]), spec)
    assert with_narrower or not wider_only  # accepted below => accepted above


# --- Pod Security level --------------------------------------------------------------------------------------

def levels(**rules_by_type):
    return pod_security.level({t: secure(t, layer(PROJECT, "p", rules_by_type.get(t, {}), rules_by_type.get(
        f"{t}_defaults", {}))) for t in ("trainings", "workspaces", "inferences")})


def test_the_secure_default_is_baseline():
    assert levels() == "baseline"


@pytest.mark.parametrize("rules", [
    {"security": {"hostNetwork": {"canEdit": True}}},
    {"storage": {"hostPath": {"instances": {"canAdd": True}}}},
    {"security": {"capabilities": {"options": [{"value": "SYS_ADMIN"}]}}},
])
def test_allowing_host_access_or_capabilities_anywhere_is_privileged(rules):
    assert levels(workspaces=rules) == "privileged"


def test_allowing_host_path_for_inferences_is_privileged():
    assert levels(inferences={"storage": {"hostPath": {"instances": {"canAdd": True}}}}) == "privileged"


def test_forcing_restricted_settings_in_every_type_is_restricted():
    forced = {"security": {"runAsNonRoot": {"canEdit": False}, "seccompProfileType": {"canEdit": False},
                           "capabilities": {"canEdit": False}},
              "storage": {"git": {"instances": {"canAdd": False}}, "nfs": {"instances": {"canAdd": False}}}}
    defaults = {"security": {"runAsNonRoot": True, "seccompProfileType": "RuntimeDefault"}}
    assert levels(trainings=forced, trainings_defaults=defaults, workspaces=forced, workspaces_defaults=defaults,
                  inferences=forced, inferences_defaults=defaults) == "restricted"
    # An inference may mount nfs (Run:ai latest's spec): restricted needs its policy to refuse it too.
    inference = {"security": forced["security"], "storage": {"git": forced["storage"]["git"]}}
    assert levels(trainings=forced, trainings_defaults=defaults, workspaces=forced, workspaces_defaults=defaults,
                  inferences=inference, inferences_defaults=defaults) == "baseline"
    assert levels(trainings=forced, trainings_defaults=defaults) == "baseline"  # the other types are not forced
    assert pod_security.namespace_labels("restricted") == {
        f"pod-security.kubernetes.io/{mode}{suffix}": value for mode in ("enforce", "warn", "audit")
        for suffix, value in (("", "restricted"), ("-version", "latest"))}


@pytest.mark.parametrize("value, refused", [(1, False), (3, False), (5, False), (2, True), (4, True)])
def test_a_step_is_counted_from_the_minimum(value, refused):
    """min 1, step 2: 1, 3, 5 are on the steps; 2 and 4 (multiples of 2 counted from 0) are not."""
    problems = check_value("integer", {"min": 1, "step": 2}, value)
    assert [attribute for attribute, _ in problems] == (["step"] if refused else [])
    if refused:
        assert problems[0][1] == "must be a multiple of 2 from 1"
