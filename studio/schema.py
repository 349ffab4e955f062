"""drf-spectacular extensions: how the bearer token appears in the OpenAPI document, the list envelopes under
each view's own key, and the error body every operation may answer."""

from drf_spectacular.authentication import SessionScheme
from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter

IF_MATCH = OpenApiParameter(
    "If-Match", OpenApiTypes.STR, OpenApiParameter.HEADER, required=False,
    description="The ETag of the last read: a write whose If-Match names an older one is a 412 and changes nothing.",
)


class StudioSessionScheme(SessionScheme):
    """The session cookie, as DRF's (studio.iam.auth.SessionAuthentication adds the temporary-password refusal)."""

    target_class = "studio.iam.auth.SessionAuthentication"


class BearerTokenScheme(OpenApiAuthenticationExtension):
    target_class = "studio.iam.auth.BearerTokenAuthentication"
    name = "bearerAuth"

    def get_security_definition(self, auto_schema):
        return {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}


class StudioAutoSchema(AutoSchema):
    def _get_paginator(self):
        # drf-spectacular asks a fresh paginator, which cannot see the view, for the list envelope's schema:
        # tell it the view's `results_key` ("workloads", "events", ...) so the document names the real key.
        paginator = super()._get_paginator()
        if paginator is not None and getattr(self.view, "results_key", None):
            paginator.results_key = self.view.results_key
        return paginator

    def get_override_parameters(self):
        from studio.concurrency import (
            ETagMixin,  # not at import: this module loads while apps are being set up
        )

        parameters = super().get_override_parameters()
        if self.method in ("PUT", "PATCH", "DELETE") and isinstance(self.view, ETagMixin):
            parameters = [*parameters, IF_MATCH]
        return parameters


ERROR_SCHEMA = {
    "type": "object",
    "description": "Every error: `{code, message}`, with `details` and `errors` for validation; the Kit APIs add "
                   "`detail` with the same text as `message`.",
    "properties": {
        "code": {"type": "integer"},
        "message": {"type": "string"},
        "details": {"type": "string"},
        "detail": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {"type": "object", "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
                      "required": ["field", "message"]},
        },
    },
    "required": ["code", "message"],
}
ERROR_CODES = {
    "400": "Bad input; every problem is listed in `errors`.",
    "401": "No or bad credentials.",
    "403": "The caller may see the object but its role may not do this.",
    "404": "No such object, or the caller may not see it.",
    "503": "The database is unavailable; retry shortly.",
}
WRITE_ERROR_CODES = {
    "409": "A name conflict, or the object is still in use.",
    "412": "If-Match names an ETag that is no longer current.",
}


def add_error_responses(result, generator, request, public):
    """Postprocessing hook: document the error body (studio.errors) under the codes every operation may
    answer, so that clients and schema checks know them; writes may also answer 409 and 412."""
    result.setdefault("components", {}).setdefault("schemas", {})["Error"] = ERROR_SCHEMA
    content = {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}
    for path, operations in result.get("paths", {}).items():
        kit = path.startswith(("/cfg/", "/streaming/"))
        for method, operation in operations.items():
            codes = {**ERROR_CODES, **(WRITE_ERROR_CODES if method != "get" else {})}
            if kit:  # Kit App Streaming's status for a request that does not validate (kit.errors)
                codes["422"] = codes.pop("400")
                if (path, method) == ("/streaming/stream", "post"):
                    codes["429"] = "The project runs its cap of streams and the profile refuses requests over it."
            responses = operation.setdefault("responses", {})
            for code, description in codes.items():
                responses.setdefault(code, {"description": description, "content": content})
    return result


def without_client_url_copies(endpoints):
    """The Kit APIs answer again under a client URL (`/kit-client/{token}/cfg/…`): the same operations, documented
    once, under `/cfg` and `/streaming` (docs/kit.md says how a client URL is used)."""
    return [endpoint for endpoint in endpoints if not endpoint[0].startswith("/kit-client/")]
