from studio.models import Project, is_platform_admin


def navigation(request):
    """What the page header needs: admin flag, the user's projects and the selected one."""
    user = getattr(request, "user", None)
    if user is None or not user.is_authenticated:
        return {}
    projects = list(Project.objects.visible_to(user).only("id", "name"))
    selected_id = request.session.get("project_id")
    selected = next((p for p in projects if p.pk == selected_id), projects[0] if projects else None)
    return {"is_platform_admin": is_platform_admin(user), "nav_projects": projects, "current_project": selected}
