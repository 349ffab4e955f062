"""A Kit catalogue on top of `org`: two applications with versions and profiles owned by project A or B."""

from types import SimpleNamespace

import pytest

from kit import errors
from tests.factories import (
    ApplicationFactory,
    ApplicationProfileFactory,
    ApplicationVersionFactory,
    UserFactory,
)

VALIDATION = "There was a validation error in the request."


def error(response, code: int, message: str) -> dict:
    """Assert the Kit error body: studio's {code, message, ...} plus `detail` with the same text."""
    body = response.json()
    assert response.status_code == code, body
    assert body["code"] == code and body["message"] == message and body["detail"] == message, body
    return body


def fields_of(body: dict) -> set[str]:
    return {e["field"] for e in body.get("errors", [])}


@pytest.fixture
def kit(org):
    """usd-viewer 1.0.0, 1.1.0-rc.1 and 1.1.0; composer 2.0.0. Profiles:
    `default` (A's, shared with all, any app and version), `high-mem` (A's, usd-viewer 1.0.0 only),
    `composer-only` (B's, unshared, composer *), `a-private` (A's, unshared, usd-viewer *)."""
    viewer = ApplicationFactory(id="usd-viewer", name="USD Viewer", description="View USD stages.", tags=["viewer"])
    composer = ApplicationFactory(id="composer", name="USD Composer", description="Compose.", tags=[])
    versions = {
        v: ApplicationVersionFactory(application=viewer, version=v, container="nvcr.io/nvidia/omniverse/usd-viewer",
                                     container_version=v)
        for v in ("1.0.0", "1.1.0-rc.1", "1.1.0")
    }
    ApplicationVersionFactory(application=composer, version="2.0.0")
    profiles = SimpleNamespace(
        default=ApplicationProfileFactory(
            slug="default", name="Default application profile",
            description="The default profile for running the application.",
            owner_project=org.a, sharing_mode="all",
        ),
        high_mem=ApplicationProfileFactory(
            slug="high-mem", name="High memory profile", description="A profile with increased memory allocation.",
            owner_project=org.a, supported_applications=[{"name": "usd-viewer", "versions": ["1.0.0"]}],
            compute={"cpuMemoryRequest": "64Gi"},
        ),
        composer_only=ApplicationProfileFactory(
            slug="composer-only", owner_project=org.b, supported_applications=[{"name": "composer", "versions": ["*"]}],
        ),
        a_private=ApplicationProfileFactory(
            slug="a-private", owner_project=org.a, supported_applications=[{"name": "usd-viewer", "versions": ["*"]}],
        ),
    )
    loner = UserFactory(username="erin")  # authenticated, in no project
    return SimpleNamespace(viewer=viewer, composer=composer, versions=versions, profiles=profiles, loner=loner)


__all__ = ["VALIDATION", "error", "errors", "fields_of"]
