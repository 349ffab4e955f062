"""Request options of reads and writes, checked as the real server checks them: continue tokens, resourceVersion
and resourceVersionMatch of lists, dryRun of writes."""

from __future__ import annotations

import base64
import binascii
import bisect
import json

from . import errors, validation
from .errors import bad_request


def encode_continue(rv: int, namespace: str, name: str) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": f"{namespace}/{name}"})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        namespace, _, name = data["start"].partition("/")
        return int(data["rv"]), (namespace, name)
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise bad_request("continue key is not valid: incorrect encoded start resourceVersion "
                          "(version meta.k8s.io/v1)") from None


def parse_resource_version(rv: str) -> int:
    try:
        value = int(rv)
    except ValueError:
        value = -1
    if value < 0:
        raise bad_request(f'invalid resource version: "{rv}"')
    return value


def after_key(objects: list[dict], after: tuple[str, str]):
    """The objects of a (namespace, name)-ordered list strictly after `after`."""
    keys = [(o["metadata"].get("namespace", ""), o["metadata"]["name"]) for o in objects]
    return objects[bisect.bisect_right(keys, after):]


def check_list_options(query: dict, *, watch: bool) -> None:
    """ListOptions validation of the real server (resourceVersionMatch rules), 422 naming each problem."""
    match = query.get("resourceVersionMatch") or ""
    if not match:
        return
    rv, causes = query.get("resourceVersion") or "", []

    def forbidden(why: str) -> None:
        causes.append(validation.cause("resourceVersionMatch", f"Forbidden: {why}", "FieldValueForbidden"))

    if watch:  # a watch's own rules (1.35: without sendInitialEvents, no resourceVersionMatch at all)
        forbidden("resourceVersionMatch is forbidden for watch unless sendInitialEvents is provided")
        if match != "NotOlderThan":
            causes.append(validation.cause("resourceVersionMatch", f'Unsupported value: "{match}": supported '
                                                                   'values: "NotOlderThan"', "FieldValueNotSupported"))
        raise errors.invalid_options("ListOptions", causes)
    if not rv:
        forbidden("resourceVersionMatch is forbidden unless resourceVersion is provided")
    if query.get("continue"):
        forbidden("resourceVersionMatch is forbidden when continue is provided")
    if match not in ("Exact", "NotOlderThan"):
        causes.append(validation.cause("resourceVersionMatch", f'Unsupported value: "{match}": supported values: '
                                                               '"Exact", "NotOlderThan", ""', "FieldValueNotSupported"))
    if match == "Exact" and rv == "0":
        forbidden('resourceVersionMatch "exact" is forbidden for resourceVersion "0"')
    if causes:
        raise errors.invalid_options("ListOptions", causes)


def check_dry_run(value: str | None, options_kind: str) -> bool:
    """`dryRun=All` is the only directive; anything else is refused before the write (422), as on the real server."""
    if value is None:
        return False
    if value != "All":
        raise errors.invalid_options(options_kind, [validation.cause(
            "dryRun", f'Unsupported value: {json.dumps([value])}: supported values: "All"',
            "FieldValueNotSupported")])
    return True
