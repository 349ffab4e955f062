"""The audit trail in plain words: "alice suspended workload train", "bob changed their password", "root created
project alpha". Read from what the trail records (the action, the object's type and the fields that changed), for
the audit page and the short History section of an object's own page."""

from dataclasses import dataclass

from django.apps import apps
from django.db.models import Model

from studio.audit import AuditEvent

HISTORY_SIZE = 10

# How a change of one field reads, by its old and new values: (field, new value) → verb.
FIELD_VERBS = {
    ("desired_phase", "Stopped"): "suspended",
    ("desired_phase", "Running"): "resumed",
    ("is_active", False): "deactivated",
    ("is_active", True): "reactivated",
}


def _nouns() -> dict[str, str]:
    """{model label: its verbose name} of every installed model (the registry, not a name of another app)."""
    return {model._meta.label_lower: str(model._meta.verbose_name) for model in apps.get_models()}


_NOUNS: dict[str, str] = {}


def noun(object_type: str) -> str:
    if not _NOUNS:
        _NOUNS.update(_nouns())
    return _NOUNS.get(object_type) or object_type.rpartition(".")[2]


def _field(name: str) -> str:
    return name.replace("_", " ")


@dataclass(frozen=True)
class Words:
    verb: str  # "suspended", "changed the password of", "created"
    noun: str  # "workload", "user"
    details: str  # "gpu limit, name" — the fields of a plain change; "" otherwise
    sentence: str  # the whole line: who, what, which


def describe(event: AuditEvent) -> Words:
    kind = noun(event.object_type)
    changes = event.changes if isinstance(event.changes, dict) else {}
    actor = event.actor_name or "system"
    details = ""
    if event.action == AuditEvent.Action.CREATE:
        verb = "launched" if kind == "workload" else "created"
    elif event.action == AuditEvent.Action.DELETE:
        verb = "deleted"
    else:
        verb = next((FIELD_VERBS[(name, pair[1])] for name, pair in changes.items()
                     if isinstance(pair, list) and len(pair) == 2 and _hashable(pair[1])
                     and (name, pair[1]) in FIELD_VERBS), "")
        if not verb and "password" in changes:
            verb = "changed the password of"
        if not verb:
            verb = "changed"
            details = ", ".join(_field(name) for name in changes if not name.endswith("updated_at")) \
                or "nothing recorded"
    who = event.object_repr or f"#{event.object_id}"
    named = f"{kind} {who}"
    if kind == "workload" and " " in who:
        named = who  # a workload reads as its kind and name: "workspace train"
    if verb == "changed the password of" and event.actor_name and event.actor_name == event.object_repr:
        sentence = f"{actor} changed their password"
    elif verb == "changed the password of" and event.actor_name:
        sentence = f"{actor} reset the password of {kind} {who}"
    else:
        sentence = f"{actor} {verb} {named}"
        if details:
            sentence += f" ({details})"
    return Words(verb=verb, noun=kind, details=details, sentence=sentence)


def _hashable(value) -> bool:
    return isinstance(value, (str, int, float, bool, type(None)))


@dataclass(frozen=True)
class HistoryLine:
    event: AuditEvent
    words: Words


def history_of(instance: Model, *, size: int = HISTORY_SIZE) -> list[HistoryLine]:
    """The newest audit entries of one object, in words; one query. The page that shows it has already checked
    that the user may see the object."""
    rows = AuditEvent.objects.filter(object_type=instance._meta.label_lower, object_id=str(instance.pk))[:size]
    return [HistoryLine(event, describe(event)) for event in rows]
