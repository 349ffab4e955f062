"""The home page per role (portal.home reads it): for platform admins the platform's counts, the clusters with
their GPUs per node pool, what waits and why, what failed lately; for everyone else their own workloads and their
projects' GPU quota in use."""

from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.shortcuts import render
from django.urls import reverse

from portal import home as reads
from portal import visits
from profiles.models import EnvironmentTemplate, ServiceProfile
from studio.models import Cluster, Department, Project, is_platform_admin


@login_required
def home(request):
    """A home per role: the platform for admins (counts, clusters and pools, what waits, what failed), the
    user's own workloads, projects and what changed since their last visit otherwise; with ?part=live (htmx,
    every few seconds) only the part that changes."""
    admin = is_platform_admin(request.user)
    workloads = reads.workload_counts(request.user, mine=not admin)
    if admin:
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
            ("Running", workloads["running"], reverse("workload-list"), "of your workloads"),
            ("Starting", workloads["starting"], reverse("workload-list"), "being created or starting containers"),
            ("Waiting", workloads["waiting"], reverse("workload-list") + "?filterBy=phase%3D%3DPending",
             "in a queue for GPUs"),
            ("Failing", workloads["failing"], reverse("workload-list"), "failed in 24 h, or cannot start"),
        ]
    system_profiles = []
    if is_platform_admin(request.user):
        # The system profiles as cards, with "View All" and launch.
        system_profiles = list(ServiceProfile.objects
                               .filter(system=True).order_by("service_type", "name")[:3])
    context = {"counts": counts, "system_profiles": system_profiles}
    if admin:
        context.update(clusters=reads.clusters(), waiting=reads.waiting(request.user),
                       failed=reads.failed_lately(request.user))
    else:
        live = request.htmx and request.GET.get("part") == "live"  # the page's refresh is not a new visit
        been, since = (visits.visit_since(request.user) if live
                       else visits.home_visit_record(user=request.user))
        context.update(my_workloads=reads.my_workloads(request.user), my_projects=reads.my_projects(request.user),
                       been_here=been, since=since, changes=visits.changes_since(request.user, since))
    if request.htmx and request.GET.get("part") == "live":
        return render(request, "portal/_home_live.html", context)
    return render(request, "portal/home.html", context)
