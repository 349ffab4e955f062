"""Pages of the organisation: home, the project switcher."""

from django.contrib.auth.decorators import login_required
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from studio.models import Cluster, Department, Project, is_platform_admin


@login_required
def home(request):
    context = {}
    if is_platform_admin(request.user):
        context["counts"] = {
            "clusters": Cluster.objects.count(),
            "departments": Department.objects.count(),
            "projects": Project.objects.count(),
        }
    return render(request, "studio/home.html", context)


@login_required
@require_POST
def switch_project(request):
    project = get_object_or_404(Project.objects.visible_to(request.user), pk=request.POST.get("project"))
    request.session["project_id"] = project.pk
    return HttpResponseRedirect(request.POST.get("next") or reverse("home"))
