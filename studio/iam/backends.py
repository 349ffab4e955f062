"""Local login (a username and password of this installation), which `LOCAL_LOGIN_ENABLED=false` turns off.

Users of the identity provider and service accounts have no usable password, so they never log in here.
Off, no password is checked anywhere: the portal's login form, Django's admin, and the password grants of
`/api/v1/token` and `/api/v2/token`; a session that a local user opened before is no longer honoured. Users of
the identity provider, service accounts and access keys are not local logins and keep working."""

from django.conf import settings
from django.contrib.auth.backends import ModelBackend

LOCAL_LOGIN_OFF = "Local login is turned off here: log in through the identity provider."


def local_login_enabled() -> bool:
    return settings.LOCAL_LOGIN_ENABLED


class LocalPasswordBackend(ModelBackend):
    def authenticate(self, request, username=None, password=None, **kwargs):
        if not local_login_enabled():
            return None
        return super().authenticate(request, username=username, password=password, **kwargs)

    def get_user(self, user_id):
        return super().get_user(user_id) if local_login_enabled() else None
