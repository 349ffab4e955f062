"""profiles.rendering and profiles.compose: placeholders, typed rendering, secrets, outputs, readme. Pure."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from profiles.compose import apply_profile, blame
from profiles.rendering import (
    RenderError,
    bind_secrets,
    evaluate,
    misplaced_secrets,
    names_in,
    placeholders,
    readme_html,
    render,
)

VALUES = {"gpus": 1, "portion": 0.5, "on": True, "off": False, "image": "python:3.11", "none": None,
          "workload.name": "run1"}


@pytest.mark.parametrize("template,expected", [
    ("{{ gpus }}", 1),
    ("{{gpus}}", 1),
    ("  {{ gpus }}", "  1"),
    ("{{ portion }}", 0.5),
    ("{{ on }}", True),
    ("--flag={{ on }} --other={{ off }}", "--flag=true --other=false"),
    ("{{ none }}", None),
    ("x{{ none }}y", "xy"),
    ("{{ image }}", "python:3.11"),
    ("run {{ workload.name }} on {{ gpus }} GPU", "run run1 on 1 GPU"),
    ("{{ gpus }}{{ gpus }}", "11"),
    ("no placeholders", "no placeholders"),
    ("{ gpus }", "{ gpus }"),
    ("{{ 1bad }}", "{{ 1bad }}"),
    (7, 7),
    (None, None),
    ({"{{ gpus }}": "{{ gpus }}"}, {"{{ gpus }}": 1}),
    ([{"a": ["{{ on }}", 2]}], [{"a": [True, 2]}]),
])
def test_render_table(template, expected):
    assert render(template, VALUES) == expected


def test_unknown_placeholder_names_its_path():
    with pytest.raises(RenderError) as raised:
        render({"compute": {"gpus": ["ok", "{{ nope }}"]}}, VALUES)
    assert (raised.value.path, raised.value.name) == ("compute.gpus[1]", "nope")


def test_sources_record_which_names_fed_each_path():
    sources = {}
    render({"args": "--a {{ gpus }} --b {{ image }}", "n": "{{ gpus }}", "x": "fixed"}, VALUES, sources=sources)
    assert sources == {"args": {"gpus", "image"}, "n": {"gpus"}}


def test_placeholders_lists_names_and_paths():
    found = placeholders({"a": "{{ x }}", "b": [{"c": "{{ x }}-{{ y.z }}"}]})
    assert found == {"x": ["a", "b[0].c"], "y.z": ["b[0].c"]}


@given(st.text())
def test_render_of_any_string_returns_it_or_raises_only_render_error(text):
    try:
        assert render(text, {}) == text
        assert names_in(text) == []
    except RenderError as exc:
        assert exc.name in names_in(text)


@given(st.text(), st.one_of(st.integers(), st.floats(allow_nan=False), st.booleans(), st.text(), st.none()))
def test_render_never_raises_when_every_name_has_a_value(text, value):
    rendered = render(text, {name: value for name in names_in(text)})
    if not names_in(text):
        assert rendered == text


@given(st.recursive(st.one_of(st.text(), st.integers(), st.none()),
                    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(), inner, max_size=3),
                    max_leaves=10))
def test_render_keeps_the_shape_of_any_document_without_placeholders(document):
    if not placeholders(document):
        assert render(document, {}) == document


SECRETS = {"api_key", "generated.token"}


def test_secret_env_values_become_secret_references_and_empty_ones_are_dropped():
    spec = {"environmentVariables": [
        {"name": "KEY", "value": "{{ api_key }}"},
        {"name": "TOKEN", "value": "{{ generated.token }}", "exclude": False},
        {"name": "PLAIN", "value": "{{ image }}"},
    ]}
    refs = {"generated.token": {"name": "run1-in-ab", "key": "generated.token"}}
    bound = bind_secrets(spec, SECRETS, refs.get)
    assert bound["environmentVariables"] == [
        {"name": "TOKEN", "exclude": False, "secret": {"name": "run1-in-ab", "key": "generated.token"}},
        {"name": "PLAIN", "value": "{{ image }}"},
    ]


@pytest.mark.parametrize("spec,paths", [
    ({"environmentVariables": [{"name": "K", "value": "{{ api_key }}"}]}, []),
    ({"environmentVariables": [{"name": "K", "value": "Bearer {{ api_key }}"}]}, ["environmentVariables[0].value"]),
    ({"args": "--token {{ generated.token }}"}, ["args"]),
    ({"labels": [{"name": "k", "value": "{{ api_key }}"}]}, ["labels[0].value"]),
    ({"environmentVariables": [{"name": "{{ api_key }}", "value": "x"}]}, ["environmentVariables[0].name"]),
])
def test_secrets_anywhere_but_a_whole_env_value_are_misplaced(spec, paths):
    assert sorted(misplaced_secrets(spec, SECRETS)) == paths


@pytest.mark.parametrize("expression,expected", [
    ("{{ workload.url }}/lab", "http://h/p/lab"),
    ("{{ workload.serviceAddress }}", None),
    ("{{ inputs.gpus }} GPUs", "2 GPUs"),
    ("{{ workload.url }} at {{ workload.serviceAddress }}", None),
])
def test_evaluate_is_null_until_every_name_is_known(expression, expected):
    context = {"workload.url": "http://h/p", "workload.serviceAddress": None, "inputs.gpus": 2}
    assert evaluate(expression, context) == expected


def test_profile_entries_replace_template_entries_of_the_same_name_in_place():
    spec = {"labels": [{"name": "team", "value": "ml"}, {"name": "tier", "value": "bronze"}],
            "environmentVariables": [{"name": "A", "value": "1"}]}
    applied = apply_profile(spec, labels={"tier": "gold", "new": "x"}, annotations={"example.com/a": "b c"},
                            extra_config={"A": "2", "B": "3"})
    assert applied["labels"] == [{"name": "team", "value": "ml"}, {"name": "tier", "value": "gold"},
                                 {"name": "new", "value": "x"}]
    assert applied["annotations"] == [{"name": "example.com/a", "value": "b c"}]
    assert applied["environmentVariables"] == [{"name": "A", "value": "2"}, {"name": "B", "value": "3"}]
    assert spec["labels"][1]["value"] == "bronze"  # the template is not changed


def test_blame_files_spec_errors_under_the_inputs_that_fed_them():
    detail = {"compute": {"gpuDevicesRequest": ["Must be at least 0."]}, "image": ["Must not contain spaces."]}
    sources = {"compute.gpuDevicesRequest": {"gpus"}, "image": {"image"}}
    errors = blame(detail, sources, inputs={"gpus"}, prefix="spec")
    assert errors == {"inputs.gpus": ["Must be at least 0. (at spec.compute.gpuDevicesRequest)"],
                      "spec.image": ["Must not contain spaces."]}


@pytest.mark.parametrize("source,present,absent", [
    ("# Title\n\n**bold**", ["<h1>Title</h1>", "<strong>bold</strong>"], []),
    ("<script>alert(1)</script>hi", ["hi"], ["<script"]),
    ("[x](javascript:alert(1))", [], ["javascript:"]),
    ('<img src="x" onerror="alert(1)">', [], ["onerror"]),
    ("```\ncode\n```", ["<code>code"], []),
])
def test_readme_html_is_markdown_made_safe(source, present, absent):
    html = readme_html(source)
    for text in present:
        assert text in html
    for text in absent:
        assert text not in html
