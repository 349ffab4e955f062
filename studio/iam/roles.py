"""Run:ai's predefined roles and the PaaS Studio level each grants (admin / member / viewer).

Roles are fixed, as in Run:ai (the API reads them; nobody creates them). Migration 0002 seeds them and
`roles_ensure` (run after every migrate, also after a test database flush) keeps them present."""

ROLES = [
    ("System administrator", "admin", "Manages the whole tenant: clusters, departments, projects, users and access rules."),
    ("Department administrator", "admin", "Manages the departments and projects in its scope and their access rules."),
    ("Editor", "admin", "Manages the projects in its scope: their members and every workload."),
    ("Research manager", "member", "Submits and manages workloads of the projects in its scope."),
    ("L1 researcher", "member", "Submits and manages workloads of the projects in its scope."),
    ("L2 researcher", "member", "Submits and manages workloads of the projects in its scope, without asset management."),
    ("ML engineer", "member", "Submits and manages inference workloads of the projects in its scope."),
    ("Department viewer", "viewer", "Reads the departments and projects in its scope."),
    ("Viewer", "viewer", "Reads everything in its scope."),
    ("Environments administrator", "viewer", "Manages environment assets; reads the projects in its scope."),
    ("Compute resource administrator", "viewer", "Manages compute resource assets; reads the projects in its scope."),
    ("Data source administrator", "viewer", "Manages data source assets; reads the projects in its scope."),
    ("Template administrator", "viewer", "Manages templates; reads the projects in its scope."),
    ("Credentials administrator", "viewer", "Manages credentials; reads the projects in its scope."),
]

# What each level may do, as Run:ai's Role `permissions` describe it (resourceType, groupId, actions).
_PERMISSIONS = {
    "admin": [("project", "organization", ["create", "read", "update", "delete"]),
              ("access_rules", "iam", ["create", "read", "update", "delete"]),
              ("workloads", "workload", ["create", "read", "update", "delete"])],
    "member": [("project", "organization", ["read"]), ("workloads", "workload", ["create", "read", "update", "delete"])],
    "viewer": [("project", "organization", ["read"]), ("workloads", "workload", ["read"])],
}
_TENANT_ADMIN = [("tenant", "organization", ["read", "update"]), ("department", "organization",
                 ["create", "read", "update", "delete"]), ("cluster", "physical-resource",
                 ["create", "read", "update", "delete"]), ("nodepools", "physical-resource",
                 ["create", "read", "update", "delete"]), ("users", "iam", ["create", "read", "update", "delete"])]


def permissions_of(name: str, level: str) -> list[dict]:
    rows = (_TENANT_ADMIN if name == "System administrator" else []) + _PERMISSIONS[level]
    return [{"resourceType": resource, "displayName": resource.replace("_", " ").capitalize(), "groupId": group,
             "actions": actions} for resource, group, actions in rows]


def roles_ensure(**kwargs) -> None:
    """Create any missing predefined role (a post_migrate receiver)."""
    from studio.iam.models import Role

    existing = set(Role.objects.values_list("name", flat=True))
    Role.objects.bulk_create([Role(name=name, level=level, description=text)
                              for name, level, text in ROLES if name not in existing])
