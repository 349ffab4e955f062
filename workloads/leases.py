"""Per-cluster leases in the database: one sync round (or metrics round) of a cluster at a time, with any
broker and any database. A lease that its holder never released (a killed worker) lapses after `seconds`."""

import uuid
from datetime import timedelta

from django.db import IntegrityError, transaction
from django.utils import timezone

from workloads.models import ClusterLease


def lease_acquire(cluster_id, purpose: str, *, seconds: float) -> str | None:
    """A holder token when the lease was free (or lapsed) and is now ours; None when someone holds it."""
    now = timezone.now()
    if not ClusterLease.objects.filter(cluster_id=cluster_id, purpose=purpose).exists():
        try:
            with transaction.atomic():
                ClusterLease.objects.create(cluster_id=cluster_id, purpose=purpose, expires_at=now)
        except IntegrityError:  # created by a concurrent round: fine, compete for it below
            pass
    token = uuid.uuid4().hex
    taken = ClusterLease.objects.filter(cluster_id=cluster_id, purpose=purpose, expires_at__lte=now).update(
        holder=token, expires_at=now + timedelta(seconds=seconds)
    )
    return token if taken else None


def lease_release(cluster_id, purpose: str, token: str) -> None:
    ClusterLease.objects.filter(cluster_id=cluster_id, purpose=purpose, holder=token).update(
        holder="", expires_at=timezone.now()
    )
