"""Roles as DRF permissions, and the role lookups the services use.

Visibility is a queryset (`Model.objects.visible_to(user)`): outside it, a 404. Once an object is visible,
a role that may not do the action is a 403."""

from rest_framework import permissions

from studio.models import Membership, is_platform_admin

ROLE_RANK = {Membership.Role.VIEWER: 1, Membership.Role.MEMBER: 2, Membership.Role.ADMIN: 3}


def project_role(user, project) -> str | None:
    """The user's role in the project; platform admins act as project admins everywhere."""
    if is_platform_admin(user):
        return Membership.Role.ADMIN
    cache = getattr(user, "_studio_roles", None)
    if cache is None:
        cache = dict(Membership.objects.filter(user=user).values_list("project_id", "role"))
        user._studio_roles = cache
    return cache.get(project.pk if hasattr(project, "pk") else project)


def has_project_role(user, project, minimum: str) -> bool:
    role = project_role(user, project)
    return role is not None and ROLE_RANK[role] >= ROLE_RANK[minimum]


class IsPlatformAdmin(permissions.BasePermission):
    message = "Only platform admins may do this."

    def has_permission(self, request, view):
        return is_platform_admin(request.user)


class IsPlatformAdminOrReadOnly(permissions.BasePermission):
    """Reads for every authenticated caller (scoped by the queryset), writes for platform admins."""

    message = "Only platform admins may change this."

    def has_permission(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return False
        return request.method in permissions.SAFE_METHODS or is_platform_admin(request.user)
