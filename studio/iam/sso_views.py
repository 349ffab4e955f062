"""The portal's single sign-on: `/sso/login` sends the browser to the provider (authorization code flow with
state, nonce and PKCE, mozilla-django-oidc's), `/sso/callback` brings it back, logged in. Whatever goes wrong
(the provider refused, could not be reached, the claims let no one in) comes back to the login page, which
says why; never an error page."""

import logging

import requests
from django.contrib import auth
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpResponseRedirect
from django.urls import reverse
from mozilla_django_oidc.utils import import_from_settings
from mozilla_django_oidc.views import OIDCAuthenticationCallbackView, OIDCAuthenticationRequestView

from studio.iam.providers import ProviderError, configured_provider, discovery

logger = logging.getLogger(__name__)
PROBLEM = "sso_problem"  # the session key the login page reads


def _back_to_login(request, problem: str):
    request.session[PROBLEM] = problem
    return HttpResponseRedirect(reverse("login"))


class SsoStartView(OIDCAuthenticationRequestView):
    def __init__(self, **kwargs):
        super(OIDCAuthenticationRequestView, self).__init__(**kwargs)  # the provider is read per request
        self.provider = None

    def get_settings(self, attr, *args):
        if self.provider is not None:
            values = {"OIDC_RP_SCOPES": " ".join(self.provider.scopes), "OIDC_USE_PKCE": True,
                      "OIDC_AUTHENTICATION_CALLBACK_URL": "sso-callback"}
            if attr in values:
                return values[attr]
        return import_from_settings(attr, *args)

    def get(self, request):
        self.provider = configured_provider()
        if self.provider is None:
            raise Http404("No identity provider is configured.")
        try:
            self.OIDC_OP_AUTH_ENDPOINT = discovery(self.provider)["authorization_endpoint"]
        except ProviderError as exc:
            logger.warning("sso login: %s", exc)
            return _back_to_login(request, "The identity provider cannot be reached now. Try again later.")
        self.OIDC_RP_CLIENT_ID = self.provider.client_id
        return super().get(request)


class SsoCallbackView(OIDCAuthenticationCallbackView):
    @property
    def failure_url(self):
        return reverse("login")

    def get(self, request):
        request.session.pop(PROBLEM, None)
        try:
            response = super().get(request)
        except (SuspiciousOperation, ProviderError, requests.RequestException) as exc:
            logger.warning("sso callback refused: %s", exc)
            if request.user.is_authenticated:
                auth.logout(request)
            return _back_to_login(request, "The identity provider's answer could not be used to log you in. "
                                           "Try again.")
        if response.url == self.failure_url and not request.user.is_authenticated:
            problem = request.session.get(PROBLEM) or (
                f"The identity provider refused the login: {request.GET['error']}." if request.GET.get("error")
                else "The login through the identity provider did not complete. Try again.")
            return _back_to_login(request, problem)
        return response
