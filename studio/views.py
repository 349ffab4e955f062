"""Pages of the organisation: log in, the project switcher, saved views of lists (the home page is the portal
app's)."""

from django.contrib import messages
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import ValidationError
from django.http import Http404, HttpResponseRedirect
from django.shortcuts import get_object_or_404
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_POST

from studio import saved_views
from studio.iam.backends import LOCAL_LOGIN_OFF, local_login_enabled
from studio.iam.providers import configured_provider
from studio.iam.sso_views import PROBLEM as SSO_PROBLEM
from studio.iam.throttling import login_wait
from studio.ids import is_id, parse_id
from studio.models import Project


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


def _back(request, fallback: str) -> str:
    target = request.POST.get("next", "")
    if not url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()},
                                           require_https=request.is_secure()) or not target.startswith("/"):
        return fallback
    return target


@login_required
@require_POST
def saved_view_save(request):
    """Save the list's current filters under a name (the user's own); back on the view, or on the list with the
    problems named."""
    path = request.POST.get("path", "")
    try:
        view = saved_views.saved_view_save(user=request.user, path=path, name=request.POST.get("name", ""),
                                           query=request.POST.get("query", ""))
    except ValidationError as exc:
        for field, problems in exc.message_dict.items():
            for problem in problems:
                messages.error(request, f"View not saved — {field}: {problem}")
        fallback = path if saved_views.is_page(path) else reverse("home")
        return HttpResponseRedirect(_back(request, fallback))
    messages.success(request, f"Saved the view “{view.name}”.")
    return HttpResponseRedirect(view.url)


@login_required
@require_POST
def saved_view_delete(request, view_id: int):
    """Delete one of the user's saved views (another's is a 404)."""
    try:
        saved_views.saved_view_delete(user=request.user, view_id=view_id)
    except saved_views.SavedView.DoesNotExist:
        raise Http404("No such saved view.") from None
    messages.success(request, "Deleted the saved view.")
    return HttpResponseRedirect(_back(request, reverse("home")))
