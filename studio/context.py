from studio.iam.models import is_platform_admin
from studio.nav import navigation as nav_groups
from studio.org.access import reads_org
from studio.org.models import Project


def navigation(request):
    """What the page frame needs: admin flag, the user's projects and the selected one, the side navigation."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    cached = getattr(request, "_studio_navigation", None)
    if cached is not None:  # a view that asked for the current project already read it (one query a page)
        return cached
    request._studio_navigation = _navigation(request, user)
    return request._studio_navigation


def _navigation(request, user):
    projects = list(Project.objects.visible_to(user).only("id", "name"))
    selected_id = request.session.get("project_id")
    selected = next((p for p in projects if p.pk == selected_id), projects[0] if projects else None)
    admin = is_platform_admin(user)
    return {
        "is_platform_admin": admin, "nav_projects": projects, "current_project": selected,
        "nav_groups": nav_groups(match=getattr(request, "resolver_match", None), is_platform_admin=admin,
                                 current_project=selected, reads_org=not admin and reads_org(user)),
    }
