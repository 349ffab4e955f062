"""The one-way rule between apps holds in strings too (scripts/house_rules.py, run by `make lint`)."""

import ast
import re
from pathlib import Path

import pytest

from scripts.house_rules import APP_ORDER, check, cli_problems_in, problems_in

ROOT = Path(__file__).resolve().parents[2]


def test_no_app_names_one_to_its_right():
    assert check(ROOT) == []


@pytest.mark.parametrize("source", [
    'enqueue_on_commit("policies.tasks.project_namespace_security", 1)',  # a higher app's task, by name
    'ForeignKey("workloads.Workload", on_delete=CASCADE)',  # a higher app's model, by label
    'task = "suspend"\nenqueue_on_commit(f"workloads.tasks.workload_{task}", 1)',  # a name no tool can follow
    'apps.get_model("workloads", "Workload")',  # the registry, by name
])
def test_each_way_of_naming_a_higher_app_is_refused(source):
    assert len(problems_in(source, "studio")) == 1


@pytest.mark.parametrize("source", [
    'enqueue_on_commit("studio.tasks.project_namespace_ensure", 1)',  # its own task
    'log.info("workloads.tasks are the worker\'s")',  # prose, not a dotted name
    'ForeignKey("studio.Project", on_delete=CASCADE)',  # an app to its left
])
def test_a_lower_or_own_name_is_allowed(source):
    assert problems_in(source, "workloads") == []


@pytest.mark.parametrize("source", ["from workloads.models import Workload", "import django.conf",
                                    "from studio import api", "import kubesim.node"])
def test_the_cli_importing_the_product_is_refused(source):
    assert len(cli_problems_in(source)) == 1


def test_the_cli_may_import_itself_and_its_libraries():
    assert cli_problems_in("import click\nimport requests\nfrom paas_cli import output\nfrom . import submit") == []


def test_every_task_named_in_the_product_is_a_registered_task():
    """Task names are written whole (the rule above), so each can be checked against the worker's registry."""
    from config.celery import app

    app.loader.import_default_modules()
    pattern = re.compile(r"^[a-z_]+\.tasks\.[a-z_]+$")
    named = set()
    for package in APP_ORDER:
        for file in (ROOT / package).rglob("*.py") if (ROOT / package).is_dir() else ():
            if "migrations" not in file.parts:
                named |= {n.value for n in ast.walk(ast.parse(file.read_text()))
                          if isinstance(n, ast.Constant) and isinstance(n.value, str) and pattern.match(n.value)}
    assert named and named <= set(app.tasks), named - set(app.tasks)
