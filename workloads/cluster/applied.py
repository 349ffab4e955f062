"""What we last applied to a rolled object, so that an update can take away what the new spec drops.

A JSON merge patch (RFC 7386) only adds and changes keys: an annotation, label, node selector or resource limit
the new spec no longer has would stay on the cluster. As `kubectl apply` does, the object carries what we
applied last (its labels, annotations and spec) in one annotation; an update's patch is the new manifest plus a
null for every key of that record the new manifest lacks, so the object then matches the new spec exactly,
while fields that the cluster defaulted (never ours) are left alone. Lists are replaced whole by a merge patch
already (a dropped environment variable goes with its list). An object created before this record existed is
patched without removals, as before."""

import json

ANNOTATION = "paas-studio/last-applied"


def _managed(obj: dict) -> dict:
    meta = obj.get("metadata") or {}
    annotations = {k: v for k, v in (meta.get("annotations") or {}).items() if k != ANNOTATION}
    return {"metadata": {"labels": meta.get("labels") or {}, "annotations": annotations}, "spec": obj.get("spec")}


def _record(obj: dict) -> str:
    return json.dumps(_managed(obj), sort_keys=True, separators=(",", ":"))


def annotate(obj: dict) -> dict:
    """`obj` with the record of itself, for its creation."""
    meta = obj["metadata"]
    return {**obj, "metadata": {**meta, "annotations": {**(meta.get("annotations") or {}), ANNOTATION: _record(obj)}}}


def _with_removals(old, new):
    """`new`, with a null for each key of `old` that `new` lacks, in every object both hold at the same place."""
    if not (isinstance(old, dict) and isinstance(new, dict)):
        return new
    merged = {key: _with_removals(old.get(key), value) for key, value in new.items()}
    merged.update({key: None for key in old if key not in new})
    return merged


def roll_patch(live: dict, obj: dict) -> dict:
    """The merge patch that makes `live` (as read from the cluster) carry exactly `obj`'s labels, annotations and
    spec, and records `obj` as the last applied."""
    recorded = ((live.get("metadata") or {}).get("annotations") or {}).get(ANNOTATION)
    try:
        old = json.loads(recorded) if recorded else {}
    except ValueError:
        old = {}  # someone edited it: no removals, as for an object created before the record
    patch = _with_removals(old, _managed(obj))
    patch["metadata"]["annotations"][ANNOTATION] = _record(obj)
    return patch
