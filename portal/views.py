"""The home page: counts of several apps' objects that link to their pages."""

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.shortcuts import render
from django.urls import reverse

from profiles.models import EnvironmentTemplate, ServiceProfile
from studio.models import Cluster, Department, Project, is_platform_admin
from workloads.models import Workload


def _workload_counts(user) -> dict:
    workloads = Workload.objects.visible_to(user).filter(deleted_at__isnull=True)
    return workloads.aggregate(total=Count("pk"), running=Count("pk", filter=Q(actual_phase="Running")),
                               starting=Count("pk", filter=Q(actual_phase__in=["Creating", "Pending", "Initializing"])))


@login_required
def home(request):
    """Counts that link to their pages: the whole platform for admins, the user's own workloads otherwise."""
    workloads = _workload_counts(request.user)
    if is_platform_admin(request.user):
        profiles = ServiceProfile.objects.aggregate(
            total=Count("pk"), drafts=Count("pk", filter=~Q(draft_step="")))
        counts = [
            ("Service profiles", profiles["total"], reverse("profile-list"),
             f"{profiles['drafts']} draft{'s' if profiles['drafts'] != 1 else ''}" if profiles["drafts"] else ""),
            ("Environment templates", EnvironmentTemplate.objects.count(),
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
    system_profiles = []
    if is_platform_admin(request.user):
        # The system profiles as cards, with "View All" and launch.
        system_profiles = list(ServiceProfile.objects
                               .filter(system=True).order_by("service_type", "name")[:3])
    return render(request, "portal/home.html", {"counts": counts, "system_profiles": system_profiles})
