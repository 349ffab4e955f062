"""Optimistic concurrency for updates: `ETag` on reads, `If-Match` on writes, 412 on a stale write."""

import hashlib
import json

from django.db import transaction
from rest_framework.response import Response

from studio.audit import snapshot
from studio.errors import PreconditionFailed

WRITES = ("PUT", "PATCH", "DELETE")


def etag_of(instance) -> str:
    """A strong validator: a digest of the row's stored values and its many-to-many links (the projects a
    profile is shared with live there, not in the row), so any saved change gives a new one."""
    values = snapshot(instance)
    for field in instance._meta.many_to_many:
        values[field.name] = sorted(related.pk for related in getattr(instance, field.name).all())
    digest = hashlib.sha256(json.dumps(values, sort_keys=True, default=str).encode()).hexdigest()
    return f'"{digest[:32]}"'


def check_if_match(request, instance) -> None:
    expected = request.headers.get("If-Match")
    if expected and expected.strip() != "*" and etag_of(instance) not in [e.strip() for e in expected.split(",")]:
        raise PreconditionFailed("The resource has changed since it was read: GET it again and retry with its ETag.")


def locked_if_match(request, instance):
    """The row, locked until the transaction ends, once If-Match names its current ETag (else a 412): the
    comparison and the write that follows see the same version. Call it inside `transaction.atomic()`."""
    locked = type(instance)._default_manager.select_for_update().get(pk=instance.pk)
    check_if_match(request, locked)
    return locked


def current_etag(instance) -> str:
    """The ETag of the row as stored, for the answer to a write: what the next If-Match must name."""
    return etag_of(type(instance)._default_manager.get(pk=instance.pk))


class ETagMixin:
    """For model viewsets. GET answers an ETag; a write with If-Match must name the current one or get a
    412. Writes without If-Match are accepted (last write wins). An update sets `self.updated_instance`
    so that its answer carries the new ETag."""

    def retrieve(self, request, *args, **kwargs):
        instance = self.get_object()
        return Response(self.get_serializer(instance).data, headers={"ETag": etag_of(instance)})

    def get_object(self):
        instance = super().get_object()
        if self.request.method in WRITES:
            instance = locked_if_match(self.request, instance)
        return instance

    def dispatch(self, request, *args, **kwargs):
        # OPTIONS too: DRF's metadata describes a write by running its object lookup, which locks the row.
        if request.method in (*WRITES, "OPTIONS"):
            with transaction.atomic():
                return super().dispatch(request, *args, **kwargs)
        return super().dispatch(request, *args, **kwargs)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if request.method in ("PUT", "PATCH") and response.status_code == 200 and "ETag" not in response:
            instance = getattr(self, "updated_instance", None)
            if instance is not None:
                response["ETag"] = current_etag(instance)
        return response
