"""The messages of the Kit App Streaming APIs (the Kit session manager's own), and the
error body they travel in: the studio body `{code, message, details?, errors?}` plus `detail` with the same text,
which Kit clients read.

A request that does not validate answers 422, as Kit App Streaming (a FastAPI service) does, where the rest of
PaaS Studio answers 400: Kit clients tell a refused request by its status (NVIDIA's web-viewer-sample treats
every status up to 400 as success)."""

from rest_framework import exceptions, status

from studio.errors import exception_handler

RESOURCE_FORBIDDEN = "You do not have permission to access this resource."
PROFILE_FORBIDDEN = "You do not have permission to access this profile."
PROFILES_NOT_FOUND = "The requested profiles were not found."
PROFILE_NOT_FOUND = "The requested profile was not found."
APPLICATION_NOT_FOUND = "The requested application was not found."
VERSION_NOT_FOUND = "The requested application version was not found."
SESSION_NOT_FOUND = "The requested session was not found."
SESSION_FORBIDDEN = "You do not have permission to terminate this session."
LAUNCH_FORBIDDEN = "You do not have permission to launch sessions in this project."
CLIENT_URL_GONE = "The client URL this request came through is no longer valid (revoked, expired, or its credential ended)."
CLIENT_URL_READS_ONLY = "A client URL reads applications and profiles and runs streams; it changes nothing else."


def not_found(message: str) -> exceptions.NotFound:
    return exceptions.NotFound(message)


def forbidden(message: str) -> exceptions.PermissionDenied:
    return exceptions.PermissionDenied(message)


def kit_exception_handler(exc, context):
    response = exception_handler(exc, context)
    if response is None:
        return None
    if response.status_code == status.HTTP_400_BAD_REQUEST:
        response.status_code = status.HTTP_422_UNPROCESSABLE_ENTITY
        if isinstance(response.data, dict) and "code" in response.data:
            response.data["code"] = status.HTTP_422_UNPROCESSABLE_ENTITY
    if isinstance(response.data, dict) and "message" in response.data:
        body = dict(response.data)
        response.data = {"code": body.pop("code"), "message": body["message"], "detail": body.pop("message"), **body}
    return response


def text_of(exc) -> str:
    """The sentences of a refusal (an APIException or a validation error), for a message or a page."""
    detail = getattr(exc, "detail", None)
    if detail is None:
        return str(exc)
    if isinstance(detail, dict):
        return " ".join(f"{key}: {text}" if key not in ("non_field_errors", "") else str(text)
                        for key, values in detail.items()
                        for text in (values if isinstance(values, list) else [values]))
    return " ".join(map(str, detail)) if isinstance(detail, list) else str(detail)
