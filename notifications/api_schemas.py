"""OpenAPI schemas of the notifications API's answers (Run:ai's shapes; ours for the in-portal notifications)."""

_S, _I, _B = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
_NULL_S, _NULL_B = {**_S, "nullable": True}, {**_B, "nullable": True}
_TYPE = {**_S, "enum": ["email", "slack", "webhook"]}


def _object(required: dict, optional: dict | None = None) -> dict:
    """An object schema; OpenAPI 3.0 allows no empty `required` list, so none is given then."""
    shape = {"type": "object", "properties": {**required, **(optional or {})}}
    return {**shape, "required": list(required)} if required else shape


NOTIFICATION_TYPES = {"type": "array", "items": _object({"category": _S, "type": _S, "description": _S})}
STATE = _object({"enabled": _B}, {"email": _object({}, {"enabled": _NULL_B}),
                                  "slack": _object({}, {"enabled": _NULL_B, "workspaceName": _NULL_S})})
CHANNELS = {"type": "array", "items": _object({"name": _S, "type": _TYPE})}
CHANNEL = _object({"name": _S, "type": _TYPE, "config": {"type": "object"}})
SLACK_APP = _object({"slackAppUrl": _S})
VALID = _B
SUBSCRIPTION = _object({"id": _S, "events": {"type": "array", "items": _object(
    {"category": _S, "types": {"type": "array", "items": _S}})}, "channels": {"type": "array", "items": _S}},
    {"scope": _object({}, {"projectId": _S, "departmentId": _S}), "pendingMinutes": {**_I, "nullable": True}})
SUBSCRIPTIONS = {"type": "array", "items": SUBSCRIPTION}
NOTIFICATION = _object({"id": _S, "category": _S, "type": _S, "title": _S, "message": _S,
                        "workloadId": _NULL_S, "projectId": _NULL_S, "createdAt": {**_S, "format": "date-time"},
                        "read": _B, "readAt": {**_S, "format": "date-time", "nullable": True}})
NOTIFICATIONS = _object({"notifications": {"type": "array", "items": NOTIFICATION}},
                        {"next": {**_I, "nullable": True}})
COUNT = _object({"count": _I})
