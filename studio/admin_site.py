"""Django's admin site, as a development tool: not served unless ADMIN_SITE_ENABLED (default: DEBUG, so `make run`
has it and production does not), and with no password form of its own.

Why not in production: its writes go straight to the models, past the services — no validation of quotas or
policies, no audit event, nothing sent to the cluster — and its login was a second password form that neither the
login throttles nor the audit trail saw (security round 3, S08). Everything it offers is in the portal and the API.
Where it is served, its login page sends the browser to the portal's `/login` (throttled like every credential
check), which comes back to the admin page asked for."""

from functools import wraps

from django.conf import settings
from django.contrib.admin import AdminSite
from django.contrib.auth.views import redirect_to_login
from django.http import Http404
from django.urls import reverse


def _served() -> None:
    if not settings.ADMIN_SITE_ENABLED:
        raise Http404("No such page.")


class StudioAdminSite(AdminSite):
    def admin_view(self, view, cacheable=False):
        inner = super().admin_view(view, cacheable)

        @wraps(view)
        def gated(request, *args, **kwargs):
            _served()
            return inner(request, *args, **kwargs)

        return gated

    def login(self, request, extra_context=None):
        """The portal's login (throttled), never a password check of its own, whatever the method."""
        _served()
        return redirect_to_login(request.GET.get("next") or reverse("admin:index"), login_url=reverse("login"))

    def logout(self, request, extra_context=None):
        _served()
        return super().logout(request, extra_context)

    def catch_all_view(self, request, url):
        _served()
        return super().catch_all_view(request, url)
