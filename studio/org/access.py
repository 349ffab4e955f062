"""Who may read and change departments and projects on the organisation pages, from Run:ai's roles.

Every role grants a level (studio.iam.roles). A role at tenant scope covers every department; at department
scope, that department and its projects. On the pages:

- reading a department and its projects (lists, quota forms shown read-only): any level there (e.g. Department
  viewer);
- changing a project of a department (its quotas, department, scheduling rules; creating and deleting one):
  the admin level there (Department administrator, Editor);
- changing a department itself (its quotas), clusters and node pools: platform admins (a department's quota is
  what its admin shares out, not theirs to raise).

Lists start from `departments_readable` / `projects_readable`: a row outside them is a 404; a refused change on
a readable row is a 403."""

from studio.iam.models import LEVEL_RANK, AccessRule, Level, is_platform_admin, subject_rules
from studio.org.models import Department, Project


def department_levels(user) -> dict:
    """{department id: the user's highest level there} from department-scope rules, and under the key None the
    level of the user's tenant-wide rules (which cover every department); empty when the user has neither."""
    levels: dict = {}
    for scope, _project, department_id, level in subject_rules(user):
        key = None if scope in AccessRule.TENANT_WIDE else department_id if scope == AccessRule.Scope.DEPARTMENT \
            else False
        if key is not False and LEVEL_RANK[level] > LEVEL_RANK.get(levels.get(key), 0):
            levels[key] = level
    return levels


def department_level(user, department_id) -> str | None:
    """The user's level in a department (platform admins: admin everywhere)."""
    if is_platform_admin(user):
        return Level.ADMIN
    if not getattr(user, "is_authenticated", False):
        return None
    levels = department_levels(user)
    found = [levels[k] for k in (None, department_id) if k in levels]
    return max(found, key=LEVEL_RANK.get) if found else None


def reads_org(user) -> bool:
    """Whether the user may open the departments and projects pages: a platform admin, or a role at tenant or
    department scope."""
    return is_platform_admin(user) or bool(getattr(user, "is_authenticated", False) and department_levels(user))


def departments_readable(user):
    if is_platform_admin(user):
        return Department.objects.all()
    levels = department_levels(user) if getattr(user, "is_authenticated", False) else {}
    if None in levels:
        return Department.objects.all()
    return Department.objects.filter(pk__in=list(levels))


def departments_managed(user):
    """Departments whose projects the user may change."""
    if is_platform_admin(user):
        return Department.objects.all()
    levels = department_levels(user) if getattr(user, "is_authenticated", False) else {}
    if levels.get(None) == Level.ADMIN:
        return Department.objects.all()
    return Department.objects.filter(pk__in=[k for k, v in levels.items() if k is not None and v == Level.ADMIN])


def projects_readable(user):
    return Project.objects.filter(department__in=departments_readable(user))


def manages_department(user, department_id) -> bool:
    return department_level(user, department_id) == Level.ADMIN


def may_edit_department(user) -> bool:
    return is_platform_admin(user)
