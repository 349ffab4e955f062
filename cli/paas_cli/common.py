"""What every command shares: the output and project options, the error handling of the root group, and finding a
project or a workload by name."""

from __future__ import annotations

import json
import re

import click

from paas_cli import output
from paas_cli.client import NOT_FOUND, USAGE, Api, CliError
from paas_cli.config import Config, ConfigError

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# The command word (also the workloads list's `type`) -> its collection under /api/v1/workloads/.
KINDS = {"workspace": "workspaces", "training": "trainings", "distributed": "distributed",
         "inference": "inferences"}
SUSPENDABLE = ("workspace", "training", "distributed")
STATE = {"output": "table"}
INTERRUPTED = 130  # Ctrl-C, as a shell reports it (it ends `logs -f` with 0)


class Root(click.Group):
    """Reports a CliError on stderr (the server's JSON error body with `-o json`) and exits with its code."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (CliError, ConfigError) as exc:
            error = exc if isinstance(exc, CliError) else CliError(str(exc), USAGE)
            if STATE["output"] == "json" and error.body:
                click.echo(json.dumps(error.body), err=True)
            else:
                click.echo(f"studio: {error.message}", err=True)
            ctx.exit(error.code)
        except KeyboardInterrupt:
            click.echo("", err=True)
            ctx.exit(INTERRUPTED)


def _set_output(ctx, param, value):
    STATE["output"] = value
    return value


def output_option(function):
    return click.option("-o", "--output", "fmt", type=click.Choice(output.FORMATS), default="table",
                        show_default=True, callback=_set_output, is_eager=True,
                        help="table for people; json or yaml (the server's fields) for scripts.")(function)


def project_option(function):
    return click.option("-p", "--project", metavar="NAME",
                        help="The project (default: `studio config project`, or STUDIO_PROJECT).")(function)


def session() -> tuple[Config, Api]:
    config = Config.load()
    return config, Api(config.url, config.token)


def project_named(api: Api, name: str) -> dict:
    found = api.get("/api/v1/org-unit/projects", filterBy=f"name=={name}", limit=500)
    for project in found.get("projects", []):
        if project.get("name") == name:
            return project
    raise CliError(f"project {name!r} not found (or you are not one of its members)", NOT_FOUND)


def project_of(config: Config, given: str | None) -> str:
    name = given or config.project
    if not name:
        raise CliError("no project: pass -p NAME, or run `studio config project NAME`", USAGE)
    return name


def workload_named(api: Api, kind: str, name: str, project: str) -> dict:
    """The live workload of this kind and name in the project (a workload id is taken too)."""
    if UUID.match(name):
        try:
            row = api.get(f"/api/v1/workloads/{name}")
        except CliError as exc:
            if exc.code != NOT_FOUND:
                raise
        else:
            if row.get("type") == kind:
                return row
    else:
        filters = [f"type=={kind}", f"projectName=={project}", f"name=={name}"]
        for row in api.get("/api/v1/workloads", filterBy=filters, limit=500).get("workloads", []):
            if row.get("name") == name:
                return row
    raise CliError(f"{kind} {name!r} not found in project {project!r}", NOT_FOUND)
