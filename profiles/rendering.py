"""Spec templates and output expressions: `{{ name }}` placeholders in string values. Pure.

* A string that is exactly one placeholder takes the value itself, typed: `"{{ gpus }}"` becomes 1. A value
  of None (an optional input left empty) leaves null, which the spec reads as an absent field.
* Any other string has its placeholders interpolated as text (booleans as true/false, None as "").
* Keys are never rendered. An unknown name raises RenderError naming the path where it sits.
* Secrets (secret variables, generated values) may only be the whole value of an environment variable:
  `bind_secrets` turns those entries into references to the launch's Kubernetes Secret, so a secret value
  never sits in the spec that the API echoes.
"""

import re
from collections.abc import Callable, Collection, Iterator, Mapping
from typing import Any

import markdown
import nh3

PLACEHOLDER = re.compile(r"\{\{\s*([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)?)\s*\}\}")
ENV_LIST = "environmentVariables"


class RenderError(ValueError):
    def __init__(self, path: str, name: str):
        self.path, self.name = path, name
        super().__init__(f"Unknown placeholder {{{{ {name} }}}}.")


def join(path: str, key) -> str:
    """`a.b[0].c`, the error field notation of studio.errors."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else str(key)


def strings(value, path: str = "") -> Iterator[tuple[str, str]]:
    """(path, text) of every string value in a JSON document."""
    if isinstance(value, str):
        yield path, value
    elif isinstance(value, Mapping):
        for key, item in value.items():
            yield from strings(item, join(path, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            yield from strings(item, join(path, index))


def names_in(text: str) -> list[str]:
    return [match[1] for match in PLACEHOLDER.finditer(text)]


def placeholders(template) -> dict[str, list[str]]:
    """Every placeholder name of a template and the paths where it appears."""
    found: dict[str, list[str]] = {}
    for path, text in strings(template):
        for name in names_in(text):
            found.setdefault(name, []).append(path)
    return found


def text(value) -> str:
    if value is None:
        return ""
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def render(template, values: Mapping[str, Any], *, sources: dict[str, set[str]] | None = None, path: str = ""):
    """The template with every placeholder replaced from `values`. `sources`, when given, collects which
    names fed each rendered path, so a spec error there can be told as an error of those inputs."""
    if isinstance(template, str):
        return _render_text(template, values, sources, path)
    if isinstance(template, Mapping):
        return {key: render(item, values, sources=sources, path=join(path, key)) for key, item in template.items()}
    if isinstance(template, list):
        return [render(item, values, sources=sources, path=join(path, i)) for i, item in enumerate(template)]
    return template


def _render_text(template: str, values, sources, path):
    names = names_in(template)
    if not names:
        return template
    for name in names:
        if name not in values:
            raise RenderError(path, name)
    if sources is not None:
        sources.setdefault(path, set()).update(names)
    whole = PLACEHOLDER.fullmatch(template)
    if whole:
        return values[whole[1]]
    return PLACEHOLDER.sub(lambda match: text(values[match[1]]), template)


def evaluate(expression: str, context: Mapping[str, Any]) -> str | None:
    """An output expression as text; None while a name it uses has no value yet (an endpoint not known)."""
    names = names_in(expression)
    if any(context.get(name) is None for name in names):
        return None
    return PLACEHOLDER.sub(lambda match: text(context[match[1]]), expression)


def _secret_entry(item, secret_names: Collection[str]) -> str | None:
    """The secret name an environment entry's value is wholly made of, if it is one."""
    if not isinstance(item, Mapping) or not isinstance(item.get("value"), str):
        return None
    whole = PLACEHOLDER.fullmatch(item["value"])
    return whole[1] if whole and whole[1] in secret_names else None


def misplaced_secrets(spec_template, secret_names: Collection[str]) -> dict[str, str]:
    """{path: sentence} for each secret placeholder anywhere but the whole value of an environment variable."""
    allowed = set()
    if isinstance(spec_template, Mapping) and isinstance(spec_template.get(ENV_LIST), list):
        for index, item in enumerate(spec_template[ENV_LIST]):
            if _secret_entry(item, secret_names):
                allowed.add(join(join(ENV_LIST, index), "value"))
    problems = {}
    for path, value in strings(spec_template):
        if path not in allowed and any(name in secret_names for name in names_in(value)):
            problems[path] = ("A secret can only be the whole value of an environment variable "
                              "(environmentVariables[].value), where it becomes a Secret reference.")
    return problems


def bind_secrets(spec_template: dict, secret_names: Collection[str], ref: Callable[[str], dict | None]) -> dict:
    """Environment entries whose value is a secret become `{"name", "secret": ref(name)}`; an entry whose
    secret has no value (an optional input left empty) is dropped."""
    entries = spec_template.get(ENV_LIST) if isinstance(spec_template, Mapping) else None
    if not isinstance(entries, list):
        return spec_template
    bound = []
    for item in entries:
        name = _secret_entry(item, secret_names)
        if name is None:
            bound.append(item)
        elif (secret := ref(name)) is not None:
            bound.append({**{k: v for k, v in item.items() if k != "value"}, "secret": secret})
    return {**spec_template, ENV_LIST: bound}


def readme_html(source: str) -> str:
    """Markdown to HTML that is safe to show: nh3 keeps only harmless tags and attributes."""
    return nh3.clean(markdown.markdown(source or "", extensions=["fenced_code", "tables", "sane_lists"]))
