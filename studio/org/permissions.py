"""Who may change projects through the API: platform admins, and the admins of a project's department (Run:ai's
Department administrator, Editor; studio.org.access) for that department's projects — as on the organisation
pages. A department's own quota stays with platform admins: it is what its admin shares out."""

from rest_framework import permissions
from rest_framework.exceptions import PermissionDenied

from studio.iam.models import is_platform_admin
from studio.org.access import departments_managed, manages_department


class ChangesProjectsOfManagedDepartments(permissions.BasePermission):
    """Reads for every authenticated caller (scoped by the queryset); a write needs a department the caller
    manages (refused at once otherwise), and the object check names the project's."""

    message = "Only platform admins and the admins of a project's department may change it."

    def has_permission(self, request, view):
        if not (request.user and request.user.is_authenticated):
            return False
        if request.method in permissions.SAFE_METHODS or is_platform_admin(request.user):
            return True
        return departments_managed(request.user).exists()

    def has_object_permission(self, request, view, obj):
        return request.method in permissions.SAFE_METHODS or manages_department(request.user, obj.department_id)


def require_manages(user, department) -> None:
    """A project created in, or moved to, `department`: the caller must manage it (a 403 naming it)."""
    if department is not None and not manages_department(user, department.pk):
        raise PermissionDenied(f"Only platform admins and the admins of department {department.name} may place a "
                               f"project there.")
