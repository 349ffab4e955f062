"""Errors as the API server reports them: a `Status` body with the real reasons, codes and messages."""


class ApiError(Exception):
    def __init__(self, code: int, reason: str, message: str, details: dict | None = None,
                 metadata: dict | None = None):
        super().__init__(message)
        self.code, self.reason, self.message, self.details = code, reason, message, details
        self.metadata = metadata or {}

    def status(self) -> dict:
        body = {"kind": "Status", "apiVersion": "v1", "metadata": self.metadata, "status": "Failure",
                "message": self.message, "reason": self.reason, "code": self.code}
        if not self.reason:  # errors passed through from storage carry none
            del body["reason"]
        if self.details:
            # Go's omitempty: a core kind's details carry no group.
            body["details"] = {k: v for k, v in self.details.items() if not (k == "group" and v == "")}
        return body


class Unavailable(Exception):
    """A write the API server did not take for a passing reason (unreachable, 5xx, 429): the node side tries it
    again later, as a kubelet does, rather than dropping it."""


def success(res, name: str, uid: str) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success",
            "details": {"name": name, **({"group": res.group} if res.group else {}), "kind": res.plural, "uid": uid}}


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
    summary = _aggregate(causes)
    return ApiError(422, "Invalid", f'{res.kind}{res.group and "." + res.group} "{name}" is invalid: {summary}',
                    {"name": name, "group": res.group, "kind": res.kind, "causes": causes})


def _aggregate(causes: list[dict]) -> str:
    """The message's summary of the causes, as field.ErrorList.ToAggregate() writes it: each distinct error once
    (the causes keep every one), in brackets when there are several."""
    parts = list(dict.fromkeys(f"{c['field']}: {c['message']}" for c in causes))
    return parts[0] if len(parts) == 1 else "[" + ", ".join(parts) + "]"


def bad_request(message: str) -> ApiError:
    return ApiError(400, "BadRequest", message)


def forbidden(res, name: str, message: str) -> ApiError:
    return ApiError(403, "Forbidden", message, {"name": name, "group": res.group, "kind": res.plural})


def expired(message: str) -> ApiError:
    # Watches and continue tokens that fall out of the history window: the real server says "Expired", 410.
    return ApiError(410, "Expired", message)


# The real server's words when etcd has compacted what a list asks for (storage/etcd3).
LIST_TOO_OLD = "The resourceVersion for the provided list is too old."
CONTINUE_TOO_OLD = ("The provided continue parameter is too old to display a consistent list result. You can start a "
                    "new list without the continue parameter, or use the continue token in this response to retrieve "
                    "the remainder of the results. Continuing with the provided token results in an inconsistent list "
                    "- objects that were created, modified, or deleted between the time the first chunk was returned "
                    "and now may show up in the list.")


def continue_expired(fresh_token: str) -> ApiError:
    """410 for a continue token older than the history; `metadata.continue` carries one that goes on from now."""
    return ApiError(410, "Expired", CONTINUE_TOO_OLD, metadata={"continue": fresh_token})


def too_large_resource_version(asked: int, current: int) -> ApiError:
    return ApiError(504, "Timeout", f"Timeout: Too large resource version: {asked}, current: {current}",
                    {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                     "retryAfterSeconds": 1})


def future_revision(asked: int, current: int) -> ApiError:
    """An exact (or paged) read of a revision the server has not reached: 504 at once, without waiting and
    without `retryAfterSeconds` (1.35; 1.20 passed etcd's 500 "required revision is a future revision" through)."""
    return ApiError(504, "Timeout", f"Timeout: Too large resource version: {asked}, current: {current}",
                    {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}]})


def invalid_options(kind: str, causes: list[dict]) -> ApiError:
    """422 for request options (ListOptions, CreateOptions, ...): `ListOptions.meta.k8s.io "" is invalid: ...`."""
    summary = _aggregate(causes)
    return ApiError(422, "Invalid", f'{kind}.meta.k8s.io "" is invalid: {summary}',
                    {"group": "meta.k8s.io", "kind": kind, "causes": causes})


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
