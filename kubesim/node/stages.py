"""Life cycles as data, in the shape of KWOK's Stage objects: each stage names the kind it applies to
(`resourceRef`), a `selector` on the object, a `delay` and what comes `next`. The stages live in YAML files under
`kubesim/stages/`, one or more documents a file, each with input/output test data under `kubesim/stages/testdata/`
(tests/kubesim/test_stages.py plays them).

    apiVersion: kubesim.paas-studio/v1alpha1
    kind: Stage
    metadata: {name: pod-crash-restart}
    spec:
      resourceRef: {apiGroup: v1, kind: Pod}
      selector:
        matchAnnotations: {...}             # exact values
        matchLabels: {...}
        matchExpressions:                   # all must hold; operators In, NotIn, Exists, DoesNotExist
        - {key: .kubelet.stage, operator: In, values: [running]}
        - {key: '.metadata.annotations["kubesim.paas-studio/crashes"]', operator: Exists}
      delay:                                # from the object's `since` (the last stage's time)
        durationMilliseconds: 500           # the fallback, as KWOK's
        durationFrom:
          expressionFrom: '.metadata.annotations["kubesim.paas-studio/run-seconds"]'   # seconds
          setting: restart_seconds          # a setting of the simulator, in seconds (its pace)
        backoffFrom: .kubelet.restarts      # n -> duration * min(2 ** (n - 1), 30), the kubelet's back-off
        jitterDurationMilliseconds: 800     # an upper bound: the delay falls between duration and it
      next: {...}                           # read by the controller that plays the kind (kubelet, jobs)

A key is a path into the object as KWOK's are: `.status.phase`, `.metadata.annotations["a/b"]`, and, for lists,
`.status.conditions[type=Ready].status` (the first element whose field has that value) or `.status.conditions[0]`. The object a controller
hands in may carry its own block of facts (the kubelet's `.kubelet`, the Job controller's `.job`). Values compare
as strings, booleans as `true`/`false`. The stages of a kind are tried in their files' order (files by name) and
the first that matches and is due applies; a stage that matches but is not due yet gives the time to look again.
"""

import functools
import hashlib
import re
from dataclasses import dataclass
from pathlib import Path

import yaml

DIRECTORY = Path(__file__).resolve().parent.parent / "stages"
OPERATORS = ("In", "NotIn", "Exists", "DoesNotExist")
_STEP = re.compile(r'\.([A-Za-z_][\w-]*)|\["([^"]*)"\]|\[([\w.-]+)=([^\]]*)\]|\[([0-9]+)\]')


class StageError(ValueError):
    """A stage file that does not say what a stage must."""


@dataclass(frozen=True)
class Stage:
    name: str
    kind: str
    selector: dict
    delay: dict
    next: dict
    expressions: tuple = ()  # the selector's matchExpressions, compiled

    def matches(self, doc) -> bool:
        return matches(self.selector, doc, self.expressions)


@functools.lru_cache(maxsize=1024)
def path_steps(path: str) -> tuple[tuple, ...]:
    """`.a["b/c"][type=Ready].d` -> [("key", "a"), ("key", "b/c"), ("where", "type", "Ready"), ("key", "d")]."""
    steps, pos = [], 0
    while pos < len(path):
        match = _STEP.match(path, pos)
        if not match:
            raise StageError(f"bad path {path!r} at {pos}")
        name, quoted, field, value, index = match.groups()
        if index is not None:
            steps.append(("index", int(index)))
        else:
            steps.append(("where", field, value) if field else ("key", name if name is not None else quoted))
        pos = match.end()
    if not steps:
        raise StageError(f"bad path {path!r}")
    return tuple(steps)


def value_at(doc, path: str):
    """The value at a path, or None where any step is missing."""
    return _value(doc, path_steps(path))


def text(value) -> str | None:
    """A value as selectors compare it: strings as they are, booleans as JSON writes them."""
    if value is None or isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    return str(value)


def compile_expressions(expressions: list | None) -> tuple:
    """matchExpressions -> ((path steps, operator, the values as texts), ...)."""
    return tuple((path_steps(e["key"]), e["operator"], frozenset(text(v) for v in e.get("values") or []))
                 for e in expressions or [])


def _value(doc, steps):
    node = doc
    for step in steps:
        if step[0] == "key":
            node = node.get(step[1]) if isinstance(node, dict) else None
        elif step[0] == "index":
            node = node[step[1]] if isinstance(node, list) and step[1] < len(node) else None
        else:
            node = next((i for i in node if isinstance(i, dict) and text(i.get(step[1])) == step[2]), None) \
                if isinstance(node, list) else None
        if node is None:
            return None
    return node


def matches(selector: dict, doc, compiled: tuple | None = None) -> bool:
    """Whether the object matches the selector (`compiled`: its matchExpressions compiled, where known)."""
    meta = doc.get("metadata") or {}
    for field, wanted in (("labels", selector.get("matchLabels")), ("annotations", selector.get("matchAnnotations"))):
        have = meta.get(field) or {}
        if any(have.get(k) != v for k, v in (wanted or {}).items()):
            return False
    if compiled is None:
        compiled = compile_expressions(selector.get("matchExpressions"))
    for steps, operator, values in compiled:
        value = text(_value(doc, steps))
        if operator == "Exists":
            holds = value is not None
        elif operator == "DoesNotExist":
            holds = value is None
        else:
            holds = (value in values) == (operator == "In")
        if not holds:
            return False
    return True


def _seconds(value) -> float | None:
    try:
        return max(0.0, float(value))
    except (TypeError, ValueError):
        return None


def delay_seconds(stage: Stage, doc, settings: dict, seed: str = "") -> float | None:
    """The stage's delay for this object, or None where it has none (the stage then does not apply)."""
    delay = stage.delay
    if not delay:
        return 0.0
    source = delay.get("durationFrom") or {}
    seconds = _seconds(value_at(doc, source["expressionFrom"])) if "expressionFrom" in source else None
    if seconds is None and "setting" in source:
        seconds = _seconds(settings.get(source["setting"]))
    if seconds is None and "durationMilliseconds" in delay:
        seconds = delay["durationMilliseconds"] / 1000
    if seconds is None:
        return None
    if "backoffFrom" in delay:
        attempt = int(_seconds(value_at(doc, delay["backoffFrom"])) or 0)
        seconds *= min(2 ** max(0, attempt - 1), 30)
    jitter = delay.get("jitterDurationMilliseconds")
    if jitter is not None and jitter / 1000 > seconds:
        # Between the duration and the jitter's bound, the same for the same object and stage.
        fraction = int(hashlib.sha256(f"{seed}/{stage.name}".encode()).hexdigest()[:8], 16) / 2**32
        seconds += (jitter / 1000 - seconds) * fraction
    return seconds


def next_due(stages: list[Stage], doc, since: float, now: float, settings: dict, seed: str = ""):
    """(the first stage that matches and is due, or None; the earliest time a matching stage before it is due)."""
    pending = None
    for stage in stages:
        if not stage.matches(doc):
            continue
        seconds = delay_seconds(stage, doc, settings, seed)
        if seconds is None:
            continue
        due = since + seconds
        if due <= now:
            return stage, due, pending
        pending = due if pending is None else min(pending, due)
    return None, None, pending


def play(stages: list[Stage], view, since, now: float, apply) -> tuple[bool, float | None]:
    """A controller's sync: each stage in order that matches the object (`view()`, asked again after each stage
    applied) and is due (its delay from `since()`) is applied (`apply(stage)`), up to the first without
    `next.continue`. (whether a stage ended the sync, the earliest time a matching stage is due, or None)."""
    pending = None
    for stage in stages:
        doc = view()
        seconds = delay_seconds(stage, doc, {}) if stage.matches(doc) else None
        if seconds is None:
            continue
        due = since() + seconds
        if due > now:
            pending = due if pending is None else min(pending, due)
            continue
        apply(stage)
        if not stage.next.get("continue"):
            return True, pending
    return False, pending


# --- files ---------------------------------------------------------------------------------------------------

def _check_selector(name: str, selector: dict) -> None:
    for expression in selector.get("matchExpressions") or []:
        if expression.get("operator") not in OPERATORS:
            raise StageError(f"stage {name}: operator {expression.get('operator')!r} is not one of {OPERATORS}")
        path_steps(expression.get("key") or "")
        if expression["operator"] in ("In", "NotIn") and not expression.get("values"):
            raise StageError(f"stage {name}: {expression['operator']} needs values")
    for field in ("matchLabels", "matchAnnotations"):
        if not isinstance(selector.get(field) or {}, dict):
            raise StageError(f"stage {name}: {field} must be a mapping")


def _check_delay(name: str, delay: dict) -> None:
    source = delay.get("durationFrom") or {}
    if set(source) - {"expressionFrom", "setting"}:
        raise StageError(f"stage {name}: durationFrom takes expressionFrom and setting")
    for path in (source.get("expressionFrom"), delay.get("backoffFrom")):
        if path is not None:
            path_steps(path)
    unknown = set(delay) - {"durationMilliseconds", "durationFrom", "backoffFrom", "jitterDurationMilliseconds"}
    if unknown:
        raise StageError(f"stage {name}: unknown delay fields {sorted(unknown)}")


def parse(document: dict) -> Stage:
    if not isinstance(document, dict) or document.get("kind") != "Stage":
        raise StageError(f"not a Stage: {document!r:.80}")
    name = (document.get("metadata") or {}).get("name")
    spec = document.get("spec") or {}
    kind = (spec.get("resourceRef") or {}).get("kind")
    if not name or not kind or not isinstance(spec.get("next"), dict):
        raise StageError(f"stage {name!r}: metadata.name, spec.resourceRef.kind and spec.next are required")
    selector, delay = spec.get("selector") or {}, spec.get("delay") or {}
    _check_selector(name, selector)
    _check_delay(name, delay)
    return Stage(name, kind, selector, delay, spec["next"], compile_expressions(selector.get("matchExpressions")))


def load_file(path: Path) -> list[Stage]:
    with open(path, encoding="utf-8") as handle:
        return [parse(document) for document in yaml.safe_load_all(handle) if document is not None]


def load(kind: str, directory: Path = DIRECTORY) -> list[Stage]:
    """The stages of a kind, in their files' order."""
    stages = [stage for path in sorted(directory.glob("*.yaml")) for stage in load_file(path) if stage.kind == kind]
    names = [s.name for s in stages]
    duplicated = {n for n in names if names.count(n) > 1}
    if duplicated:
        raise StageError(f"stage names used twice: {sorted(duplicated)}")
    return stages
