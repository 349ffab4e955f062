"""One error shape for every API response: {code, message, details?, errors?}.

Validation errors are flattened to dotted JSON paths (`spec.compute.gpuPortionRequest`,
`spec.storage.pvc[0].claimInfo.size`) so that every problem is named at once."""

import structlog
from django.conf import settings
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.db import DatabaseError, DataError, InterfaceError, OperationalError
from django.http import Http404, JsonResponse
from rest_framework import exceptions, status
from rest_framework.response import Response

from studio.clusters import kube

log = structlog.get_logger("studio.errors")

VALIDATION_MESSAGE = "There was a validation error in the request."
MESSAGES = {
    401: "Authentication credentials were not provided.",
    403: "You do not have permission to perform this action.",
    404: "The specified resource was not found.",
    405: "Method not allowed.",
    406: "Not acceptable.",
    409: "The request conflicts with the current state of the resource.",
    412: "The resource has changed since it was read.",
    415: "Unsupported media type; send application/json.",
    429: "Too many requests.",
    500: "Unexpected error.",
    503: "The service is temporarily unavailable; try again shortly.",
}


class Conflict(exceptions.APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = MESSAGES[409]
    default_code = "conflict"


class PreconditionFailed(exceptions.APIException):
    status_code = status.HTTP_412_PRECONDITION_FAILED
    default_detail = MESSAGES[412]
    default_code = "precondition_failed"


class ServiceUnavailable(exceptions.APIException):
    status_code = status.HTTP_503_SERVICE_UNAVAILABLE
    default_detail = MESSAGES[503]
    default_code = "unavailable"


def _join(prefix: str, key) -> str:
    if isinstance(key, int):
        return f"{prefix}[{key}]"
    if key in ("non_field_errors", "__all__"):
        return prefix
    return f"{prefix}.{key}" if prefix else str(key)


def flatten_errors(detail, prefix: str = "") -> list[dict]:
    """Nested DRF/Django error detail → [{"field": "a.b[0].c", "message": "…"}]."""
    if isinstance(detail, dict):
        out = []
        for key, value in detail.items():
            out += flatten_errors(value, _join(prefix, key))
        return out
    if isinstance(detail, list):
        if all(isinstance(item, (str, exceptions.ErrorDetail)) for item in detail):
            return [{"field": prefix, "message": str(item)} for item in detail]
        out = []
        for index, value in enumerate(detail):
            if value in ({}, [], None, ""):
                continue
            out += flatten_errors(value, _join(prefix, index) if isinstance(value, (dict, list)) else prefix)
        return out
    return [{"field": prefix, "message": str(detail)}]


def error_body(code: int, message: str, *, details: str | None = None, errors: list | None = None) -> dict:
    body = {"code": code, "message": message}
    if details:
        body["details"] = details
    if errors:
        body["errors"] = errors
    return body


def validation_response(detail) -> Response:
    errors = flatten_errors(detail)
    details = "; ".join(f"{e['field'] or 'request'}: {e['message']}" for e in errors)
    return Response(error_body(400, VALIDATION_MESSAGE, details=details, errors=errors), status=400)


def exception_handler(exc, context):
    if isinstance(exc, DjangoValidationError):
        detail = exc.message_dict if hasattr(exc, "error_dict") else {"": exc.messages}
        return validation_response(detail)
    if isinstance(exc, exceptions.ValidationError):
        return validation_response(exc.detail)
    if isinstance(exc, DataError):
        # Input that passed validation but that the database cannot hold or compare, e.g. a NUL character
        # in a path segment or text (PostgreSQL refuses it): bad input, so a 400, never a 500.
        log.info("data_error", error=str(exc))
        return validation_response({"": ["A value in the request cannot be stored or looked up (e.g. it holds a "
                                          "NUL character)."]})
    if isinstance(exc, Http404):
        exc = exceptions.NotFound(MESSAGES[404])
    elif isinstance(exc, PermissionDenied):
        exc = exceptions.PermissionDenied(MESSAGES[403])
    elif isinstance(exc, (OperationalError, InterfaceError)):
        log.warning("database_unavailable", error=str(exc))
        exc = ServiceUnavailable()
    elif isinstance(exc, (kube.ClusterError, *kube.TRANSIENT_ERRORS)):
        # A cluster that a view asked and that did not answer, or whose registration cannot be used: the view
        # says more where it knows more (pod logs, nodes); anywhere else it is a 503, never a 500.
        log.warning("cluster_unavailable", error=str(exc))
        exc = ServiceUnavailable(f"The cluster did not answer: {getattr(exc, 'message', None) or exc}")
    if not isinstance(exc, exceptions.APIException):
        return None  # a real bug: Django's 500 handler answers (as JSON on /api/)
    code = exc.status_code
    detail = exc.detail
    if isinstance(exc, exceptions.NotFound) and str(detail) in ("Not found.", "No  matches the given query."):
        detail = MESSAGES[404]
    message = str(detail) if isinstance(detail, str) else MESSAGES.get(code, "Request failed.")
    headers = {}
    if getattr(exc, "auth_header", None):
        headers["WWW-Authenticate"] = exc.auth_header
    if getattr(exc, "wait", None):
        headers["Retry-After"] = str(int(exc.wait))
    return Response(error_body(code, message), status=code, headers=headers)


# Where the APIs answer (Run:ai's 2.18 node pools of a cluster under /v1/k8s/): JSON only, never cached.
API_PATHS = ("/api/", "/cfg/", "/streaming/", "/kit-client/", "/v1/k8s/")


def _is_json_path(request) -> bool:
    return request.path.startswith(API_PATHS)


def json_not_found(request, exception=None):
    return JsonResponse(error_body(404, MESSAGES[404]), status=404)


def json_server_error(request):
    return JsonResponse(error_body(500, MESSAGES[500]), status=500)


def handler404(request, exception=None):
    if _is_json_path(request):
        return json_not_found(request)
    from django.views.defaults import page_not_found

    return page_not_found(request, exception)


def handler400(request, exception=None):
    """Django's own refusals before a view runs: a body over DATA_UPLOAD_MAX_MEMORY_SIZE (413), more than
    DATA_UPLOAD_MAX_NUMBER_FIELDS parameters, a bad Host header... As JSON under the API paths."""
    from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent
    from django.views.defaults import bad_request

    if isinstance(exception, RequestDataTooBig):
        body = error_body(413, "The request body is too large.", details=f"At most {settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes.")
        return JsonResponse(body, status=413) if _is_json_path(request) else bad_request(request, exception)
    if not _is_json_path(request):
        return bad_request(request, exception)
    if isinstance(exception, TooManyFieldsSent):
        return JsonResponse(error_body(400, f"Too many query or form parameters (more than "
                                            f"{settings.DATA_UPLOAD_MAX_NUMBER_FIELDS})."), status=400)
    return JsonResponse(error_body(400, "Bad request."), status=400)


def handler500(request):
    if _is_json_path(request):
        return json_server_error(request)
    from django.views.defaults import server_error

    return server_error(request)


class DatabaseUnavailableMiddleware:
    """A database that is down or restarting answers 503 with the error body, never a 500."""

    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if isinstance(exception, (OperationalError, InterfaceError)) or (
            isinstance(exception, DatabaseError) and "connection" in str(exception).lower()
        ):
            log.warning("database_unavailable", error=str(exception), path=request.path)
            return JsonResponse(error_body(503, MESSAGES[503]), status=503, headers={"Retry-After": "5"})
        return None
