"""Errors as the API server reports them: a `Status` body with the real reasons, codes and messages."""


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str, details: dict | None = None):
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details

    def status(self) -> dict:
        body = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                "message": self.message, "reason": self.reason, "code": self.code}
        if self.details:
            body["details"] = self.details
        return body


def success(res, name: str, uid: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": {"name": name, "group": res.group, "kind": res.plural, "uid": uid}}


def not_found(res, name: str) -> ApiError:
    return ApiError(404, "NotFound", f'{res.qualified} "{name}" not found',
                    {"name": name, "group": res.group, "kind": res.plural})


def namespace_not_found(name: str) -> ApiError:
    return ApiError(404, "NotFound", f'namespaces "{name}" not found', {"name": name, "kind": "namespaces"})


def already_exists(res, name: str) -> ApiError:
    return ApiError(409, "AlreadyExists", f'{res.qualified} "{name}" already exists',
                    {"name": name, "group": res.group, "kind": res.plural})


def conflict(res, name: str, why: str = "the object has been modified; please apply your changes "
                                          "to the latest version and try again") -> ApiError:
    return ApiError(409, "Conflict", f'Operation cannot be fulfilled on {res.qualified} "{name}": {why}',
                    {"name": name, "group": res.group, "kind": res.plural})


def invalid(res, name: str, causes: list[dict]) -> ApiError:
    """422 with one cause per field, worded like the real validators ("field: Invalid value: ...")."""
    parts = [f"{c['field']}: {c['message']}" for c in causes]
    summary = parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"
    return ApiError(422, "Invalid", f'{res.kind}{res.group and "." + res.group} "{name}" is invalid: {summary}',
                    {"name": name, "group": res.group, "kind": res.kind, "causes": causes})


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def forbidden(res, name: str, message: str) -> ApiError:
    return ApiError(403, "Forbidden", message, {"name": name, "group": res.group, "kind": res.plural})


def expired(message: str) -> ApiError:
    # Watches and continue tokens that fall out of the history window: the real server says "Expired", 410.
    return ApiError(410, "Expired", message)


def path_not_found() -> ApiError:
    return ApiError(404, "NotFound", "the server could not find the requested resource", {})


def method_not_allowed() -> ApiError:
    return ApiError(405, "MethodNotAllowed", "the server does not allow this method on the requested resource", {})


def unsupported_media_type(content_type: str, accepted: list[str]) -> ApiError:
    return ApiError(415, "UnsupportedMediaType",
                    f"the body of the request was in an unknown format - accepted media types include: "
                    f"{', '.join(accepted)}", {})


UNAUTHORIZED = ApiError(401, "Unauthorized", "Unauthorized")
UNAVAILABLE = ApiError(503, "ServiceUnavailable", "the server is currently unable to handle the request")
