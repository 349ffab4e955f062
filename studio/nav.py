"""The side navigation: groups of links by role, and which one is the page being shown.

Links name URL patterns; a pattern another app has not registered (yet) is left out rather than failing, so an app
that adds pages (policies) appears in the navigation as soon as its URLs exist."""

from dataclasses import dataclass

from django.urls import NoReverseMatch, reverse


@dataclass(frozen=True)
class Link:
    label: str
    url_name: str
    icon: str
    # Other URL names whose pages belong under this link (a detail page under its list).
    also: tuple[str, ...] = ()
    args: tuple = ()


@dataclass(frozen=True)
class NavItem:
    label: str
    url: str
    icon: str
    active: bool


EVERYONE = [
    ("Workspace", [
        Link("Home", "home", "home"),
        Link("Catalog", "catalog", "layout-grid", also=("catalog-launch",)),
        Link("Workloads", "workload-list", "player-play", also=("workload-detail",)),
        Link("GPU overview", "gpu-overview", "server", also=("gpu-node-pool", "gpu-node")),
        Link("Quota", "quota-overview", "chart-line", also=("project-quota",)),
        Link("Usage", "usage", "chart-bar"),
        Link("Notifications", "notifications", "bell"),
    ]),
    ("Kit App Streaming", [
        Link("Streams", "kit-sessions", "device-desktop", also=("kit-session-new",)),
        Link("Kit apps", "kit-apps", "apps", also=("kit-app", "kit-app-edit", "kit-app-new")),
        Link("App profiles", "kit-profiles", "adjustments", also=("kit-profile", "kit-profile-edit", "kit-profile-new")),
    ]),
]

# Run:ai's workload assets (assets/views.py) and the New workload flow that picks them (workloads/asset_views.py).
EVERYONE.append(("Assets", [
    Link("New workload", "workload-new", "rocket"),
    Link("Environments", "asset-list", "box", args=("environments",)),
    Link("Compute resources", "asset-list", "adjustments", args=("compute-resources",)),
    Link("Data sources", "asset-list", "folders", args=("data-sources",)),
    Link("Credentials", "asset-list", "key", args=("credentials",)),
]))

PLATFORM_ADMIN = [
    ("PaaS Studio", [
        Link("System profiles", "system-profiles", "box"),
        Link("Service profiles", "profile-list", "stack-2", also=("profile-detail", "profile-new", "profile-step")),
        Link("Environment templates", "template-list", "template",
             also=("template-detail", "version-new", "version-detail")),
    ]),
    ("Administration", [
        Link("Clusters", "org-list", "server", args=("clusters",), also=("node-pools", "node-pool-edit", "org-edit")),
        Link("Departments", "org-list", "building", args=("departments",), also=("department-access", "org-edit")),
        Link("Projects", "org-list", "folders", args=("projects",), also=("project-members", "org-edit")),
        Link("Users", "portal-users", "users", also=("portal-user",)),
        Link("Policies", "policy-list", "shield", also=("policy-detail", "policy-edit")),
        Link("Audit trail", "audit-trail", "history"),
        Link("Reports", "usage-reports", "file-text"),
    ]),
]


def _url(link: Link) -> str | None:
    try:
        return reverse(link.url_name, args=link.args)
    except NoReverseMatch:
        return None


def _is_active(link: Link, match) -> bool:
    if match is None:
        return False
    if match.url_name == link.url_name:
        return not link.args or tuple(match.kwargs.values())[:1] == link.args[:1]
    if match.url_name in link.also:
        # org pages share one URL name per kind: /org/projects/… belongs under Projects only.
        kind = match.kwargs.get("kind")
        return not link.args or kind is None or kind == link.args[0]
    return False


# Someone with a role on a department (Department administrator, Department viewer, …) who is no platform admin.
DEPARTMENT_ROLES = [
    ("Organisation", [
        Link("Departments", "org-list", "building", args=("departments",), also=("department-access", "org-edit")),
        Link("Projects", "org-list", "folders", args=("projects",), also=("project-members", "org-edit")),
    ]),
]


def navigation(*, match, is_platform_admin: bool, current_project, reads_org: bool = False
               ) -> list[tuple[str, list[NavItem]]]:
    """The groups the user sees, each a title and its links; the one for the page shown is active."""
    groups = list(EVERYONE)
    if is_platform_admin:
        groups = groups[:1] + PLATFORM_ADMIN[:1] + groups[1:] + PLATFORM_ADMIN[1:]
    else:
        if reads_org:
            groups += DEPARTMENT_ROLES
        account = [Link("Access keys", "portal-access-keys", "key"), Link("Password", "account-password", "lock")]
        if current_project is not None:
            account.insert(0, Link("Members", "project-members", "users", args=(current_project.pk,)))
            account.insert(1, Link("Policy", "project-policy", "shield", args=(current_project.pk,)))
        groups.append(("Account", account))
    if is_platform_admin:
        groups.append(("Account", [Link("Access keys", "portal-access-keys", "key"),
                                   Link("Password", "account-password", "lock")]))
    result = []
    for title, links in groups:
        items = [NavItem(link.label, url, link.icon, _is_active(link, match))
                 for link in links if (url := _url(link)) is not None]
        if items:
            result.append((title, items))
    return result
