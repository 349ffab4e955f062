"""The one-way rule between apps, where import-linter cannot see it: strings.

import-linter follows imports; an app can still reach one to its right by naming it in a string — a Celery task
name (`"policies.tasks.x"`), a model label, a dotted path — or by building a task name at run time (an f-string),
which no tool can follow. This check reads every product module (migrations aside) and refuses:

- a string that names a module of an app to the right of the module's own app (APP_ORDER);
- an f-string that builds a task name (`f"….tasks.{name}"`);
- `apps.get_model(...)`: the app registry read by name (a lower app announces with a signal or a registry the
  higher app fills at start-up instead);
- in the command line (`cli/`, its own package, outside import-linter's reach): an import of the product — an app,
  `config`, `kubesim`, Django or DRF. It talks to the server over HTTP only.

`make lint` runs it; tests/studio/test_house_rules.py shows that it refuses each case."""

import ast
import re
import sys
from pathlib import Path

# Left to right: an app may name (import, or mention in a string) only itself and the apps to its left.
APP_ORDER = ("perf", "studio", "sharing", "policies", "assets", "profiles", "workloads", "kit", "usage",
             "notifications", "portal")
DOTTED = re.compile(r"^([a-z_]+)\.[A-Za-z_][\w.]*$")


def problems_in(source: str, app: str, path: str = "<source>") -> list[str]:
    """What breaks the rule in one module of `app`, as 'path:line: why' lines."""
    rank = APP_ORDER.index(app)
    higher = set(APP_ORDER[rank + 1:])
    found = []
    tree = ast.parse(source, path)
    pieces = {id(v) for n in ast.walk(tree) if isinstance(n, ast.JoinedStr) for v in n.values}
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in pieces:
            match = DOTTED.match(node.value)
            if match and match.group(1) in higher:
                found.append(f"{path}:{node.lineno}: names {node.value!r} of the {match.group(1)} app, to the "
                             f"right of {app}: announce with a signal or a registry that app fills instead")
        elif isinstance(node, ast.JoinedStr):
            text = "".join(v.value for v in node.values if isinstance(v, ast.Constant) and isinstance(v.value, str))
            if ".tasks." in text or text.endswith(".tasks"):
                found.append(f"{path}:{node.lineno}: a task name built at run time: name the task whole")
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get_model":
            found.append(f"{path}:{node.lineno}: get_model reads another app's model by name: import down, or let "
                         f"the app to the right announce")
    return found


CLI_FORBIDDEN = {*APP_ORDER, "config", "kubesim", "django", "rest_framework", "tests", "scripts"}


def cli_problems_in(source: str, path: str = "<source>") -> list[str]:
    """What in one module of the command line imports the product rather than speaking HTTP to it."""
    found = []
    for node in ast.walk(ast.parse(source, path)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
            [node.module] if isinstance(node, ast.ImportFrom) and node.module and not node.level else []
        found += [f"{path}:{node.lineno}: the CLI imports {name!r}: it reaches the product over HTTP only"
                  for name in names if name.split(".")[0] in CLI_FORBIDDEN]
    return found


def check(root: Path) -> list[str]:
    found = []
    for file in sorted((root / "cli").rglob("*.py")) if (root / "cli").is_dir() else ():
        if "build" not in file.relative_to(root).parts:
            found += cli_problems_in(file.read_text(), str(file.relative_to(root)))
    for app in APP_ORDER:
        for file in sorted((root / app).rglob("*.py")) if (root / app).is_dir() else ():
            if "migrations" in file.parts:
                continue
            found += problems_in(file.read_text(), app, str(file.relative_to(root)))
    return found


if __name__ == "__main__":
    problems = check(Path(__file__).resolve().parent.parent)
    print("\n".join(problems) or "house rules: no app names one to its right; the CLI imports none of the product")
    sys.exit(1 if problems else 0)
