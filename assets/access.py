"""Who may create, change and delete assets, from Run:ai's roles (studio.iam.roles) and the scope of each rule.

- Reading and using: `Asset.objects.visible_to(user)` (a project's members read the assets of the project, its
  department, its cluster and the tenant); outside it, a 404.
- Managing (create, update, delete) at a scope: an admin-level role (System administrator, Department
  administrator, Editor) whose rule covers that scope manages every kind there; the asset administrators
  (Environments, Compute resource, Data source, Credentials administrator) manage their kinds there. A rule
  covers its own scope and the scopes below it: tenant > cluster > department > project. Platform admins manage
  everything. An L1 researcher manages environments, compute resources and data sources where its rule covers
  (Run:ai's L1 researcher; the L2 researcher is the one "without asset management"), never credentials. Any
  member may create a *private* asset in a project where it holds the member level, which it alone then reads,
  changes and deletes.
- A refused change of an asset the caller reads is a 403."""

from assets.models import Asset, Kind, Scope
from assets.specs import CREDENTIAL_KINDS, DATASOURCE_KINDS
from studio.iam.permissions import has_project_role
from studio.models import AccessRule, Level, is_platform_admin

KINDS_OF_ROLE = {
    "Environments administrator": (Kind.ENVIRONMENT,),
    "Compute resource administrator": (Kind.COMPUTE,),
    "Data source administrator": DATASOURCE_KINDS,
    "Credentials administrator": CREDENTIAL_KINDS,
    "L1 researcher": (Kind.ENVIRONMENT, Kind.COMPUTE, *DATASOURCE_KINDS, Kind.WORKLOAD_TEMPLATE),
}
REFUSED = "Your roles do not let you manage {kind} assets at this scope."


def _rules(user) -> list[dict]:
    """The user's access rules with their role's name and level: one query, cached on the user for the request."""
    cached = getattr(user, "_assets_rules", None)
    if cached is None:
        cached = list(AccessRule.objects.of_subject(user).values(
            "scope_type", "cluster_id", "department_id", "project_id", "role__name", "role__level"))
        user._assets_rules = cached
    return cached


def _covers(rule: dict, asset: Asset) -> bool:
    scope = rule["scope_type"]
    if scope in AccessRule.TENANT_WIDE:
        return True
    if scope == AccessRule.Scope.CLUSTER:
        return asset.scope != Scope.TENANT and asset.cluster_id == rule["cluster_id"]
    if scope == AccessRule.Scope.DEPARTMENT:
        return asset.scope in (Scope.DEPARTMENT, Scope.PROJECT) and asset.department_id == rule["department_id"]
    return asset.scope == Scope.PROJECT and asset.project_id == rule["project_id"]


def manages(user, asset: Asset) -> bool:
    """Whether the user may create, change or delete `asset` (saved or not) at its scope."""
    if is_platform_admin(user):
        return True
    if not getattr(user, "is_authenticated", False):
        return False
    if asset.private and not asset._state.adding:
        return asset.created_by_id == user.pk  # a private asset is its creator's alone
    if asset.private and asset.scope == Scope.PROJECT and has_project_role(user, asset.project_id, Level.MEMBER):
        return True
    for rule in _rules(user):
        kinds = tuple(Kind) if rule["role__level"] == Level.ADMIN else KINDS_OF_ROLE.get(rule["role__name"], ())
        if asset.kind in kinds and _covers(rule, asset):
            return True
    return False


def manages_any(user, kinds) -> bool:
    """Whether the user may create an asset of one of `kinds` at some scope (the pages offer New and bulk delete
    on this): an admin-level role, an asset administrator of one of the kinds, an L1 researcher for its kinds, or
    a member of a project (a private asset there)."""
    if is_platform_admin(user):
        return True
    if not getattr(user, "is_authenticated", False):
        return False
    for rule in _rules(user):
        if rule["role__level"] == Level.ADMIN or set(kinds) & set(KINDS_OF_ROLE.get(rule["role__name"], ())):
            return True
        if rule["scope_type"] == AccessRule.Scope.PROJECT and rule["role__level"] == Level.MEMBER:
            return True
    return False
