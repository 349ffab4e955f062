"""Two response headers Django does not send by itself.

* `Content-Security-Policy` (CONTENT_SECURITY_POLICY): a single policy for every page. No template has an
  inline script or event handler (static/studio/ui.js does confirmations and auto-submits), so scripts
  are limited to our own files; a value injected into a page cannot run. A constant header needs no library;
  django-csp earns its keep with nonces and per-view policies, which nothing here needs. Inline *styles*
  stay allowed: htmx and a few templates set them, and they cannot run code.
* `Cache-Control: no-store` on every answer under the API paths (studio.errors.API_PATHS): they
  carry tokens, secrets shown once, and data of one user, which no shared or browser cache should keep."""

from django.conf import settings

from studio.errors import API_PATHS


class SecurityHeadersMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        response = self.get_response(request)
        if settings.CONTENT_SECURITY_POLICY and "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = settings.CONTENT_SECURITY_POLICY
        if request.path.startswith(API_PATHS) and not request.path.startswith(("/api/docs", "/api/schema")):
            response["Cache-Control"] = "no-store"
        return response
