from django.core.exceptions import ValidationError
from django.db import transaction

from sharing.models import Shareable, SharingMode
from studio.audit import audit_record, snapshot
from studio.models import AuditEvent, Project

SHARE_WITH_SOME = "Choose at least one project to share with (or share with none or all)."


def sharing_set(*, actor, obj: Shareable, mode: str, project_ids: list[int] | None = None) -> Shareable:
    """Share `obj` with no, all or the selected projects; every unknown project id is named in the 400."""
    if mode not in SharingMode.values:
        raise ValidationError({"mode": f"Must be one of: {', '.join(SharingMode.values)}."})
    project_ids = list(dict.fromkeys(project_ids or []))
    if mode != SharingMode.SELECTED and project_ids:
        raise ValidationError({"projectIds": "Give projectIds only with mode 'selected'."})
    if mode == SharingMode.SELECTED and not project_ids:  # it would share with nobody, silently
        raise ValidationError({"projectIds": SHARE_WITH_SOME})
    projects = list(Project.objects.filter(pk__in=project_ids))
    missing = sorted(set(project_ids) - {p.pk for p in projects})
    if missing:
        raise ValidationError({"projectIds": f"No such projects: {', '.join(map(str, missing))}."})
    before = {**snapshot(obj), "shared_with": sorted(p.pk for p in obj.shared_with.all())}
    with transaction.atomic():
        obj.sharing_mode = mode
        obj.save(update_fields=["sharing_mode"])
        obj.shared_with.set(projects)
        audit_record(actor=actor, action=AuditEvent.Action.UPDATE, instance=obj, before=before,
                     extra={"shared_with": sorted(p.pk for p in projects)})
    return obj
