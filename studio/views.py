"""Pages of the organisation: home, the project switcher."""

from django.apps import apps
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.db.models import Count, Q
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from studio.iam.backends import LOCAL_LOGIN_OFF, local_login_enabled
from studio.iam.providers import configured_provider
from studio.iam.sso_views import PROBLEM as SSO_PROBLEM
from studio.iam.throttling import login_wait
from studio.ids import is_id, parse_id
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
    system_profiles = []
    if is_platform_admin(request.user):
        # The home page shows the system profiles as cards, with "View All" and launch.
        system_profiles = list(apps.get_model("profiles", "ServiceProfile").objects
                               .filter(system=True).order_by("service_type", "name")[:3])
    return render(request, "studio/home.html", {"counts": counts, "system_profiles": system_profiles})


@login_required
@require_POST
def switch_project(request):
    project_id = request.POST.get("project", "")
    if not is_id(project_id):
        raise Http404("No such project.")
    project = get_object_or_404(Project.objects.visible_to(request.user), pk=parse_id(project_id))
    request.session["project_id"] = project.pk
    # Back to the page the switcher was on, never to another site.
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()):
        target = reverse("home")
    return HttpResponseRedirect(target)


class LoginView(auth_views.LoginView):
    """Django's login page, throttled as POST /api/v1/token is (studio/iam/throttling.py): over a rate, the form
    comes back with a 429, Retry-After and a message saying how long to wait; the password is not checked.

    With an identity provider configured it offers "Log in with <provider>" (studio/iam/sso_views.py), and says
    why the last single sign-on did not log the user in; with local login off (LOCAL_LOGIN_ENABLED=false) it has
    no password form, and a posted one is a 403."""

    def get_context_data(self, **kwargs):
        context = super().get_context_data(**kwargs)
        provider = configured_provider()
        context.update(sso_provider=provider.label if provider else "", local_login=local_login_enabled(),
                       sso_problem=self.request.session.pop(SSO_PROBLEM, ""))
        return context

    def post(self, request, *args, **kwargs):
        if not local_login_enabled():
            context = self.get_context_data(throttled=LOCAL_LOGIN_OFF)
            return self.render_to_response(context, status=403)
        wait = login_wait(request)
        if wait is None:
            return super().post(request, *args, **kwargs)
        throttled = f"Too many login attempts. Try again in {int(wait) + 1} seconds."
        response = self.render_to_response(self.get_context_data(throttled=throttled), status=429)
        response["Retry-After"] = str(int(wait) + 1)
        return response
