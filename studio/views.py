"""Pages of the organisation: home, the project switcher."""

from django.apps import apps
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST

from studio.models import Cluster, Department, Project, is_platform_admin


def _workload_counts(user) -> dict:
    # The apps above studio are reached through the app registry: imports point down (studio ← profiles ← workloads).
    workloads = apps.get_model("workloads", "Workload").objects.visible_to(user).filter(deleted_at__isnull=True)
    return workloads.aggregate(total=Count("pk"), running=Count("pk", filter=Q(actual_phase="Running")),
                               starting=Count("pk", filter=Q(actual_phase__in=["Creating", "Pending", "Initializing"])))


@login_required
def home(request):
    """Counts that link to their pages: the whole platform for admins, the user's own workloads otherwise."""
    workloads = _workload_counts(request.user)
    if is_platform_admin(request.user):
        profiles = apps.get_model("profiles", "ServiceProfile").objects.aggregate(
            total=Count("pk"), drafts=Count("pk", filter=~Q(draft_step="")))
        counts = [
            ("Service profiles", profiles["total"], reverse("profile-list"),
             f"{profiles['drafts']} draft{'s' if profiles['drafts'] != 1 else ''}" if profiles["drafts"] else ""),
            ("Environment templates", apps.get_model("profiles", "EnvironmentTemplate").objects.count(),
             reverse("template-list"), ""),
            ("Workloads", workloads["total"], reverse("workload-list"), f"{workloads['running']} running"),
            ("Clusters", Cluster.objects.count(), reverse("org-list", args=["clusters"]), ""),
            ("Departments", Department.objects.count(), reverse("org-list", args=["departments"]), ""),
            ("Projects", Project.objects.count(), reverse("org-list", args=["projects"]), ""),
        ]
    else:
        counts = [
            ("Running workloads", workloads["running"], reverse("workload-list"), ""),
            ("Starting", workloads["starting"], reverse("workload-list"), "Creating, pending or initializing"),
            ("All workloads", workloads["total"], reverse("workload-list"), ""),
        ]
    return render(request, "studio/home.html", {"counts": counts})


@login_required
@require_POST
def switch_project(request):
    project = get_object_or_404(Project.objects.visible_to(request.user), pk=request.POST.get("project"))
    request.session["project_id"] = project.pk
    return HttpResponseRedirect(request.POST.get("next") or reverse("home"))
