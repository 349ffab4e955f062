"""The three ways an answer is printed: `table` for people, `json` and `yaml` for scripts (the server's fields)."""

from __future__ import annotations

import json

import click
import yaml

FORMATS = ("table", "json", "yaml")


def emit(data, fmt: str, table=None) -> None:
    """Print `data` as JSON or YAML, or call `table(data)` (a function printing it for people)."""
    if fmt == "json":
        click.echo(json.dumps(data, indent=2, sort_keys=False))
    elif fmt == "yaml":
        click.echo(yaml.safe_dump(data, sort_keys=False, default_flow_style=False).rstrip("\n"))
    elif table is not None:
        table(data)
    else:
        click.echo(yaml.safe_dump(data, sort_keys=False, default_flow_style=False).rstrip("\n"))


def columns(rows: list[list], headers: list[str], indent: str = "") -> None:
    """A plain table: left-aligned columns two spaces apart, as kubectl prints them."""
    cells = [[str(h) for h in headers]] + [["" if c is None else str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    for row in cells:
        click.echo(indent + "  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())


def pairs(items: list[tuple[str, object]]) -> None:
    width = max(len(k) for k, _ in items) + 1
    for key, value in items:
        click.echo(f"{(key + ':').ljust(width)} {'' if value is None else value}")
