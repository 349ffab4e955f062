"""The messages of the Kit App Streaming APIs (seed 000, CONTRACT §5, the Kit session manager's own), and the
error body they travel in: the studio body `{code, message, details?, errors?}` plus `detail` with the same text,
which Kit clients read."""

from rest_framework import exceptions

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


def not_found(message: str) -> exceptions.NotFound:
    return exceptions.NotFound(message)


def forbidden(message: str) -> exceptions.PermissionDenied:
    return exceptions.PermissionDenied(message)


def kit_exception_handler(exc, context):
    response = exception_handler(exc, context)
    if response is not None and isinstance(response.data, dict) and "message" in response.data:
        body = dict(response.data)
        response.data = {"code": body.pop("code"), "message": body["message"], "detail": body.pop("message"), **body}
    return response
