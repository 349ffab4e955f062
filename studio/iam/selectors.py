"""Reads of single sign-on and service accounts."""

import uuid

from studio.iam.models import ServiceAccount


def service_account_by_subject_id(subject_id: str):
    """A service account as an access rule names it: by its client id (its name), or by its id."""
    accounts = ServiceAccount.objects.select_related("user")
    found = accounts.filter(client_id=subject_id).first()
    if found is None:
        try:
            found = accounts.filter(pk=uuid.UUID(subject_id)).first()
        except ValueError:
            return None
    return found
