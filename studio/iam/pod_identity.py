"""The user and group ids of a workload's pods from the identity provider, as Run:ai's
`security.uidGidSource: fromIdpToken` asks (a policy can default it, or require it with `canEdit: false`).

The ids are those the provider's claims gave at the user's last login (the `uid`, `gid` and
`supplementaryGroups` mappers, studio/iam/claims.py); whatever the request said of them is replaced, so a
user cannot run as another's uid where the policy says the provider decides."""

from rest_framework.exceptions import ValidationError

from studio.iam.models import ExternalIdentity

SOURCE = "fromIdpToken"
ID_FIELDS = ("runAsUid", "runAsGid", "supplementalGroups")


def ids_from_provider(spec: dict, *, user, path: str = "spec") -> dict:
    """`spec` with the provider's ids when it asks for them; a 400 naming the field when the user has none."""
    security = spec.get("security")
    if not isinstance(security, dict) or security.get("uidGidSource") != SOURCE:
        return spec
    link = ExternalIdentity.objects.filter(user_id=getattr(user, "pk", None)).first()
    if link is None or link.uid is None:
        raise ValidationError({f"{path}.security.uidGidSource": [
            "fromIdpToken takes the pods' user and group ids from the identity provider, and this user has none: "
            "not a user of the identity provider, or the provider sends no uid claim (see its uid mapper)."]})
    security = {k: v for k, v in security.items() if k not in ID_FIELDS}
    security["runAsUid"] = link.uid
    if link.gid is not None:
        security["runAsGid"] = link.gid
    if link.supplementary_groups:
        security["supplementalGroups"] = ",".join(str(g) for g in link.supplementary_groups)
    return {**spec, "security": security}
