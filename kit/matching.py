"""Which application profiles serve which application versions, and which version is the newest. Pure.

A profile's `supportedApplications` is a list of `{"name": <app id or "*">, "versions": [<version or "*">, ...]}`.
It matches app `a`, version `v` when some entry has name `a` or `*` and its versions hold `v` or `*`.
In the `/cfg` paths `*` is a wildcard too: as the app id it means any application, as the
version any version, so `matches(entries, "*", "*")` holds for every profile with at least one entry that has
a version. Stored ids and versions are never `*` themselves (the serializers refuse it), so one function
serves both readings.

Versions are semantic versions (semver 2.0): "newest" is the highest precedence, a pre-release below its
release; versions equal in precedence (differing only in build metadata) are ordered by their text so that
the answer does not depend on input order.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import TypeVar

import semver

WILDCARD = "*"
LATEST = "latest"  # Kit clients may ask for "latest" where a version is optional

T = TypeVar("T")


def is_version(text) -> bool:
    return isinstance(text, str) and semver.Version.is_valid(text)


def version_key(text: str) -> tuple[semver.Version, str]:
    """Sort key: semver precedence, then the text (build metadata does not take part in precedence)."""
    return semver.Version.parse(text), text


def newest(versions: Iterable[str]) -> str:
    """The highest semantic version; ValueError when there is none or one is not a semantic version."""
    versions = list(versions)
    if not versions:
        raise ValueError("No versions to choose from.")
    return max(versions, key=version_key)


def newest_first(versions: Iterable[str]) -> list[str]:
    return sorted(versions, key=version_key, reverse=True)


def _holds(pattern: str, value: str) -> bool:
    return value == WILDCARD or pattern == WILDCARD or pattern == value


def matches(supported_applications: Sequence[Mapping], app_id: str, version: str) -> bool:
    """Does a profile with these `supportedApplications` serve `app_id` at `version` (either may be `*`)?"""
    for entry in supported_applications or ():
        name = entry.get("name")
        if not isinstance(name, str) or not _holds(name, app_id):
            continue
        if any(isinstance(v, str) and _holds(v, version) for v in entry.get("versions") or ()):
            return True
    return False


def matching(items: Iterable[T], app_id: str, version: str, *,
             supported: Callable[[T], Sequence[Mapping]]) -> list[T]:
    """The items (profiles, rows or dicts) whose supported applications match, in their given order."""
    return [item for item in items if matches(supported(item), app_id, version)]
