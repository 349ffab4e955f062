"""Optimistic concurrency for updates: `ETag` on reads, `If-Match` on writes, 412 on a stale write."""

import hashlib
import json

from django.db import transaction
from rest_framework.response import Response

from studio.audit import snapshot
from studio.errors import PreconditionFailed

WRITES = ("PUT", "PATCH", "DELETE")


def etag_of(instance) -> str:
    """A strong validator: a digest of the row's stored values, so any saved change gives a new one."""
    digest = hashlib.sha256(json.dumps(snapshot(instance), sort_keys=True, default=str).encode()).hexdigest()
    return f'"{digest[:32]}"'


def check_if_match(request, instance) -> None:
    expected = request.headers.get("If-Match")
    if expected and expected.strip() != "*" and etag_of(instance) not in [e.strip() for e in expected.split(",")]:
        raise PreconditionFailed("The resource has changed since it was read: GET it again and retry with its ETag.")


class ETagMixin:
    """For model viewsets. GET answers an ETag; a write with If-Match must
    name the current one or get a 412. Writes without If-Match are accepted (last write wins)."""

    def retrieve(self, request, *args, **kwargs):
        instance = self.get_object()
        return Response(self.get_serializer(instance).data, headers={"ETag": etag_of(instance)})

    def get_object(self):
        instance = super().get_object()
        if self.request.method in WRITES:
            # Locked, so that the comparison and the write see the same version.
            instance = type(instance).objects.select_for_update().get(pk=instance.pk)
            check_if_match(self.request, instance)
        return instance

    def dispatch(self, request, *args, **kwargs):
        if request.method in WRITES:
            with transaction.atomic():
                return super().dispatch(request, *args, **kwargs)
        return super().dispatch(request, *args, **kwargs)

    def finalize_response(self, request, response, *args, **kwargs):
        response = super().finalize_response(request, response, *args, **kwargs)
        if request.method in ("PUT", "PATCH") and response.status_code == 200 and "ETag" not in response:
            instance = getattr(self, "updated_instance", None)
            if instance is not None:
                response["ETag"] = etag_of(instance)
        return response
