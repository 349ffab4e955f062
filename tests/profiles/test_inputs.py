"""profiles.variables and profiles.inputs: coercion, constraints, and the resolution of a launch's inputs."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from profiles.inputs import EffectiveInputs, effective_inputs, preview_values, resolve
from profiles.variables import InputError, check, coerce


@pytest.mark.parametrize("kind,value,expected", [
    ("string", "a b", "a b"),
    ("secret", "s3cret", "s3cret"),
    ("integer", 2, 2),
    ("integer", "2", 2),
    ("integer", " -3 ", -3),
    ("integer", 2.0, 2),
    ("number", 0.5, 0.5),
    ("number", "0.5", 0.5),
    ("number", "4", 4),
    ("number", 3, 3),
    ("boolean", True, True),
    ("boolean", "False", False),
    ("quantity", "1Gi", "1Gi"),
    ("quantity", 2, "2"),
    ("quantity", 0.5, "0.5"),
    ("enum", "fast", "fast"),
])
def test_coerce_takes_json_and_form_values(kind, value, expected):
    assert coerce(kind, value, options=["fast", "slow"]) == expected
    assert type(coerce(kind, value, options=["fast", "slow"])) is type(expected)


@pytest.mark.parametrize("kind,value", [
    ("string", 5), ("secret", None), ("integer", True), ("integer", "2.5"), ("integer", 2.5), ("integer", "many"),
    ("number", "NaN"), ("number", float("inf")), ("number", False), ("number", "1e"), ("boolean", "yes"),
    ("boolean", 1), ("quantity", "1 Gi"), ("quantity", "-1"), ("quantity", True), ("enum", "medium"),
    ("enum", 1), ("integer", [1]),
])
def test_coerce_refuses_the_wrong_type(kind, value):
    with pytest.raises(InputError):
        coerce(kind, value, options=["fast", "slow"])


@pytest.mark.parametrize("variable,value,ok", [
    ({"type": "integer", "min": 1, "max": 4}, 1, True),
    ({"type": "integer", "min": 1, "max": 4}, 5, False),
    ({"type": "number", "min": 0.1}, 0.05, False),
    ({"type": "quantity", "min": "512Mi", "max": "2Gi"}, "1Gi", True),
    ({"type": "quantity", "min": "512Mi", "max": "2Gi"}, "3Gi", False),
    ({"type": "quantity", "min": "512Mi"}, "100Mi", False),
    ({"type": "string", "pattern": "[a-z]+"}, "abc", True),
    ({"type": "string", "pattern": "[a-z]+"}, "abc1", False),
    ({"type": "secret", "pattern": "hf_.*"}, "nope", False),
])
def test_constraints(variable, value, ok):
    if ok:
        check(variable, value)
    else:
        with pytest.raises(InputError):
            check(variable, value)


VARIABLES = [
    {"name": "image", "type": "string", "default": "python:3.11"},
    {"name": "command", "type": "string", "required": True},
    {"name": "gpus", "type": "integer", "default": 0, "min": 0, "max": 2},
    {"name": "mode", "type": "enum", "options": ["fast", "slow", "safe"], "default": "fast"},
    {"name": "token", "type": "secret"},
    {"name": "debug", "type": "boolean", "default": False},
]
SETTINGS = [
    {"name": "image", "default": "python:3.12", "override": "not-allowed"},
    {"name": "mode", "override": "restricted", "allowedValues": ["fast", "slow"]},
    {"name": "debug", "visible": False, "default": True},
]
MERGED = effective_inputs(VARIABLES, SETTINGS)


def test_effective_inputs_put_the_profile_default_over_the_template_default():
    by_name = {item["name"]: item for item in MERGED}
    assert by_name["image"]["default"] == "python:3.12" and by_name["image"]["override"] == "not-allowed"
    assert by_name["gpus"]["default"] == 0 and by_name["gpus"]["override"] == "allowed"
    assert by_name["command"]["required"] and not by_name["debug"]["visible"]
    assert [item["name"] for item in MERGED] == [v["name"] for v in VARIABLES]


@pytest.mark.parametrize("given_values,values", [
    ({"command": "python"},
     {"image": "python:3.12", "command": "python", "gpus": 0, "mode": "fast", "token": None, "debug": True}),
    ({"command": "python", "gpus": "2", "mode": "slow", "token": "t"},
     {"image": "python:3.12", "command": "python", "gpus": 2, "mode": "slow", "token": "t", "debug": True}),
    ({"command": "python", "image": "", "gpus": None},  # empty means "not given", also where not allowed
     {"image": "python:3.12", "command": "python", "gpus": 0, "mode": "fast", "token": None, "debug": True}),
])
def test_resolve_table(given_values, values):
    assert resolve(MERGED, given_values) == (values, {})


@pytest.mark.parametrize("given_values,name,message", [
    ({"command": "python", "image": "ubuntu"}, "image", "cannot be overridden"),
    ({}, "command", "required"),
    ({"command": ""}, "command", "required"),
    ({"command": "python", "gpus": "two"}, "gpus", "integer"),
    ({"command": "python", "gpus": 3}, "gpus", "at most 2"),
    ({"command": "python", "mode": "safe"}, "mode", "allowed values"),
    ({"command": "python", "mode": "turbo"}, "mode", "one of"),
    ({"command": "python", "debug": False}, "debug", "cannot be overridden"),
    ({"command": "python", "colour": "red"}, "colour", "Unknown input"),
    ({"command": 5}, "command", "string"),
])
def test_resolve_errors_name_the_input(given_values, name, message):
    values, errors = resolve(MERGED, given_values)
    assert list(errors) == [name] and message in errors[name]


def test_every_error_is_reported_at_once():
    _, errors = resolve(MERGED, {"image": "x", "gpus": "x", "mode": "safe", "zzz": 1})
    assert set(errors) == {"image", "command", "gpus", "mode", "zzz"}


def test_preview_values_use_defaults_else_a_sample_of_the_type():
    preview = preview_values(effective_inputs(VARIABLES + [
        {"name": "n", "type": "number", "min": 0.25}, {"name": "q", "type": "quantity"},
        {"name": "i", "type": "integer", "max": 0}], []))
    assert preview == {"image": "python:3.11", "command": "sample", "gpus": 0, "mode": "fast", "token": "sample",
                       "debug": False, "n": 0.25, "q": "1", "i": 0}


@given(st.one_of(st.none(), st.booleans(), st.integers(), st.floats(), st.text(), st.lists(st.integers())))
def test_resolve_never_raises_whatever_the_user_sends(value):
    values, errors = resolve(MERGED, {name: value for name in ("command", "gpus", "mode", "token", "image")})
    assert set(values) | set(errors) == {v["name"] for v in VARIABLES}


_ANY = st.one_of(st.none(), st.booleans(), st.integers(), st.text(max_size=3), st.lists(st.integers(), max_size=2))
_VARIABLE = st.fixed_dictionaries({"name": st.sampled_from(["a", "b", "c"]), "type": st.sampled_from(["string", "integer"])},
                                  optional={key: _ANY for key in ("description", "default", "required", "min", "max",
                                                                  "pattern", "options")})
_SETTING = st.fixed_dictionaries({"name": st.sampled_from(["a", "b", "c", "d"])},
                                 optional={key: _ANY for key in ("default", "override", "allowedValues", "required",
                                                                 "visible")})


@given(st.lists(_VARIABLE, max_size=4, unique_by=lambda v: v["name"]), st.lists(_SETTING, max_size=4))
def test_a_catalog_pages_merge_is_effective_inputs(variables, settings):
    # The catalog merges a page's inputs with EffectiveInputs (a version's unset variables merged once): for any
    # variables and settings, the same entries as effective_inputs, read twice (the second from what it kept).
    merge = EffectiveInputs()
    expected = effective_inputs(variables, settings)
    assert merge(variables, settings) == expected
    assert merge(variables, settings) == expected
