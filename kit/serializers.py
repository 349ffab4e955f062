"""Shapes of `/cfg` and `/streaming` (as Kit App Streaming answers them): strict input serializers, plain output dicts.

Inputs reuse the field rules of workloads.specs (strict JSON types, quantities, tolerations, environment
variables, compute), so a profile accepts exactly what a workload spec would. Application and profile ids
follow the name rule of studio.names; versions are semantic versions; `*` is allowed only inside
`supportedApplications`."""

import math
import re

from rest_framework import serializers
from rest_framework.exceptions import ValidationError

from kit.matching import LATEST, WILDCARD, is_version
from kit.models import VERSION_RULE, Application, ApplicationProfile, ApplicationVersion, StreamSession
from kit.streams import FAILED, MESSAGES, QUEUED, READY, TERMINATED, port_protocol, session_view
from sharing.models import SharingMode
from sharing.services import SHARE_WITH_SOME
from studio.ids import IntegerId, integer_ids
from workloads.specs.fields import Boolean, Choice, Integer, Port, StrictSerializer, Text, texts
from workloads.specs.parts import Compute, EnvironmentVariable, Toleration
from workloads.specs.rules import (
    DNS_SUBDOMAIN,
    NAME,
    NO_SPACES,
    UUID,
    is_label_value,
    is_qualified_name,
    is_valid_name,
)

IMAGE_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
PORT_NAME = re.compile(r"[a-z0-9]([-a-z0-9]{0,13}[a-z0-9])?")  # IANA service name, as Kubernetes port names
ARGUMENT_KEY = re.compile(r"/?[A-Za-z_][A-Za-z0-9_.\-/]*")


def _rule(predicate, message):
    def check(value):
        if not predicate(value):
            raise ValidationError(message)

    return check


VERSION = _rule(is_version, VERSION_RULE)
APP_OR_WILDCARD = _rule(lambda v: v == WILDCARD or is_valid_name(v), "Must be an application id or '*'.")
VERSION_OR_WILDCARD = _rule(lambda v: v == WILDCARD or is_version(v), "Must be a semantic version or '*'.")
VERSION_OR_LATEST = _rule(lambda v: v == LATEST or is_version(v), f"{VERSION_RULE[:-1]}, or 'latest'.")
TAG = _rule(IMAGE_TAG.fullmatch, "Must be an image tag: letters, digits, '_', '.' and '-', at most 128.")
PORT_NAME_RULE = _rule(PORT_NAME.fullmatch, "Must be 1 to 15 lowercase letters, digits and '-'.")


class StringMap(serializers.Field):
    """A JSON object of string values; keys are Kubernetes qualified names, values optionally label values."""

    def __init__(self, *, label_values=False, **kwargs):
        self.label_values = label_values
        super().__init__(**kwargs)

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise ValidationError("Must be a JSON object of strings.")
        problems = {}
        for key, value in data.items():
            if not is_qualified_name(key):
                problems[key] = ["Key must be a Kubernetes qualified name such as 'app' or 'example.com/app'."]
            elif not isinstance(value, str):
                problems[key] = ["Must be a string."]
            elif self.label_values and not is_label_value(value):
                problems[key] = ["Must be a label value: at most 63 letters, digits, '-', '_' or '.'."]
        if problems:
            raise ValidationError(problems)
        return dict(data)

    def to_representation(self, value):
        return value


class Arguments(serializers.Field):
    """Kit arguments: `{"<setting>": <string, number or boolean>}`, passed as `--<setting>=<value>`."""

    def to_internal_value(self, data):
        if not isinstance(data, dict):
            raise ValidationError("Must be a JSON object.")
        problems = {}
        for key, value in data.items():
            if not ARGUMENT_KEY.fullmatch(key):
                problems[key] = ["Must be a setting name such as 'usd_stage_uri' or '/app/auto_load_usd'."]
            elif not isinstance(value, (str, int, float, bool)) or (isinstance(value, float) and not math.isfinite(value)):
                problems[key] = ["Must be a string, a number or a boolean."]
        if problems:
            raise ValidationError(problems)
        return dict(data)

    def to_representation(self, value):
        return value


# --- inputs ------------------------------------------------------------------------------------------

class ApplicationIn(StrictSerializer):
    id = Text(validators=[NAME])
    name = Text(max_length=200)
    description = Text(required=False, allow_blank=True, max_length=10_000)
    tags = texts(required=False, max_length=50)


class ApplicationUpdateIn(ApplicationIn):
    """PUT: `id` may be repeated but not changed (the view compares it); absent fields keep their values."""

    id = Text(required=False)
    name = Text(required=False, max_length=200)


class VersionIn(StrictSerializer):
    version = Text(validators=[VERSION], max_length=128)
    container = Text(validators=[NO_SPACES], max_length=255)
    container_version = Text(validators=[TAG])
    helm_chart = Text(required=False, allow_blank=True, validators=[NO_SPACES], max_length=255)
    helm_chart_version = Text(required=False, allow_blank=True, validators=[NO_SPACES], max_length=128)


class VersionRef(StrictSerializer):
    version = Text(validators=[VERSION])


class SupportedApplication(StrictSerializer):
    name = Text(validators=[APP_OR_WILDCARD])
    versions = texts(VERSION_OR_WILDCARD, min_length=1)


class LoadBalancing(StrictSerializer):
    serviceType = Choice(ApplicationProfile.ServiceType.values, required=False)
    annotations = StringMap(required=False)


class Encryption(StrictSerializer):
    mode = Choice(ApplicationProfile.Encryption.values)
    tlsSecret = Text(required=False, validators=[DNS_SUBDOMAIN])

    def cross_field_errors(self, values):
        if values.get("mode") == ApplicationProfile.Encryption.POD and not values.get("tlsSecret"):
            return {"tlsSecret": "Is required when mode is pod: the pod serves TLS with this certificate."}
        if values.get("mode") in ("none", "loadBalancer") and values.get("tlsSecret"):
            return {"tlsSecret": "Give a TLS secret only when mode is pod."}
        return {}


class StreamPort(StrictSerializer):
    name = Text(validators=[PORT_NAME_RULE])
    port = Port()
    protocol = Choice(["TCP", "UDP"], required=False)  # default: UDP for "media", TCP for every other


class Sharing(StrictSerializer):
    mode = Choice(SharingMode.values)
    projectIds = integer_ids(required=False)

    def cross_field_errors(self, values):
        if values.get("mode") == SharingMode.SELECTED and not values.get("projectIds"):
            return {"projectIds": SHARE_WITH_SOME}
        return {}


class ProfileIn(StrictSerializer):
    id = Text(validators=[NAME])
    name = Text(max_length=200)
    description = Text(required=False, allow_blank=True, max_length=10_000)
    supportedApplications = SupportedApplication(many=True)
    projectId = IntegerId(required=False)
    sharing = Sharing(required=False)
    compute = Compute(required=False)
    nodeSelector = StringMap(required=False, label_values=True)
    tolerations = Toleration(many=True, required=False)
    runtimeClassName = Text(required=False, allow_blank=True, validators=[DNS_SUBDOMAIN])
    authorization = Boolean(required=False)
    loadBalancing = LoadBalancing(required=False)
    encryption = Encryption(required=False)
    environmentVariables = EnvironmentVariable(many=True, required=False)
    ports = StreamPort(many=True, required=False)
    idleTimeoutSeconds = Integer(required=False, allow_null=True, min_value=60, max_value=30 * 24 * 3600)
    overCapacity = Choice(ApplicationProfile.OverCapacity.values, required=False)

    def cross_field_errors(self, values):
        ports = values.get("ports") or []
        problems = {}
        for key in ("name", "port"):
            seen = [p[key] for p in ports]
            if len(seen) != len(set(seen)):
                problems.setdefault("ports", f"Each port needs its own {key}.")
        return problems


class ProfileUpdateIn(ProfileIn):
    """PUT/PATCH: `id` may be repeated but not changed; absent fields keep their values."""

    id = Text(required=False)
    name = Text(required=False, max_length=200)
    supportedApplications = SupportedApplication(many=True, required=False)
    projectId = IntegerId(required=False, allow_null=True)  # null: no owner project any more


class SessionIn(StrictSerializer):
    id = Text(allow_blank=False)
    version = Text(required=False, validators=[VERSION_OR_LATEST])
    profile = Text(allow_blank=False)
    arguments = Arguments(required=False)
    projectId = IntegerId(required=False)


class SessionRef(StrictSerializer):
    id = Text(validators=[UUID])


# Model field <- API field, for the profile's plain settings (the nested ones are unpacked in profile_fields).
PROFILE_FIELDS = {
    "name": "name", "description": "description", "supportedApplications": "supported_applications",
    "compute": "compute", "nodeSelector": "node_selector", "tolerations": "tolerations",
    "runtimeClassName": "runtime_class_name", "authorization": "authorization",
    "environmentVariables": "environment", "ports": "ports", "idleTimeoutSeconds": "idle_timeout_seconds",
    "overCapacity": "over_capacity",
}


def profile_fields(data: dict) -> dict:
    """Validated ProfileIn data -> model field values (only those given)."""
    fields = {model: data[api] for api, model in PROFILE_FIELDS.items() if api in data}
    if "loadBalancing" in data:
        fields["service_type"] = data["loadBalancing"].get("serviceType", ApplicationProfile.ServiceType.LOAD_BALANCER)
        fields["service_annotations"] = data["loadBalancing"].get("annotations", {})
    if "encryption" in data:
        fields["encryption"] = data["encryption"]["mode"]
        fields["tls_secret"] = data["encryption"].get("tlsSecret", "")
    return fields


# --- outputs -----------------------------------------------------------------------------------------

def application_data(app: Application) -> dict:
    return {"id": app.id, "name": app.name, "description": app.description, "tags": list(app.tags or [])}


def version_data(version: ApplicationVersion) -> dict:
    return {
        "version": version.version,
        "container": version.container,
        "container_version": version.container_version,
        "helm_chart": version.helm_chart,
        "helm_chart_version": version.helm_chart_version,
    }


def profile_summary(profile: ApplicationProfile) -> dict:
    """What `/cfg/apps/{id}/versions/{version}/profiles[/{profile}]` answers."""
    return {"id": profile.slug, "name": profile.name, "description": profile.description}


def profile_data(profile: ApplicationProfile) -> dict:
    encryption = {"mode": profile.encryption}
    if profile.tls_secret:
        encryption["tlsSecret"] = profile.tls_secret
    return {
        **profile_summary(profile),
        "supportedApplications": profile.supported_applications,
        "projectId": profile.owner_project_id,
        "sharing": profile.sharing(),
        "compute": profile.compute,
        "nodeSelector": profile.node_selector,
        "tolerations": profile.tolerations,
        "runtimeClassName": profile.runtime_class_name,
        "authorization": profile.authorization,
        "loadBalancing": {"serviceType": profile.service_type, "annotations": profile.service_annotations},
        "encryption": encryption,
        "environmentVariables": profile.environment,
        "ports": [{**p, "protocol": port_protocol(p)} for p in profile.ports],
        "idleTimeoutSeconds": profile.idle_timeout_seconds,
        "overCapacity": profile.over_capacity,
        "revision": profile.revision,
        "createdAt": serializers.DateTimeField().to_representation(profile.created_at),
        "updatedAt": serializers.DateTimeField().to_representation(profile.updated_at),
    }


def session_data(session: StreamSession, *, position: int | None = None) -> dict:
    """A session as `/streaming/stream` answers it: Kit's `{"id", "status", "routes"}`, then PaaS Studio's own
    keys: its project and how it was chosen, its place in the project's queue while it waits, its idle time."""
    workload = session.workload
    if session.state == StreamSession.State.QUEUED:
        place = f": number {position} in the queue" if position else ""
        view = {"id": str(session.pk), "routes": {}, "status": {
            "condition": QUEUED, "message": f"{MESSAGES[QUEUED]} ({session.project.name}){place}", "status": False}}
    elif session.state == StreamSession.State.ENDED:
        view = {"id": str(session.pk), "routes": {},
                "status": {"condition": TERMINATED, "message": session.message or MESSAGES[TERMINATED], "status": False}}
    elif session.state == StreamSession.State.FAILED or workload is None:
        view = {"id": str(session.pk), "routes": {},
                "status": {"condition": FAILED, "message": session.message or MESSAGES[FAILED], "status": False}}
    else:
        view = session_view(session_id=str(session.pk), phase=workload.actual_phase,
                            phase_message=workload.phase_message, endpoints=workload.endpoints, spec=workload.spec)
    body = {"id": view["id"], "status": view["status"], "routes": view["routes"],
            "projectId": session.project_id, "projectName": session.project.name,
            "projectChosenBy": session.project_chosen_by,
            "application": session.application, "version": session.version, "profile": session.profile,
            "workloadId": str(workload.pk) if workload is not None else None,
            "queuePosition": position if session.state == StreamSession.State.QUEUED else None,
            "idleTimeoutSeconds": session.idle_timeout_seconds}
    return body


def session_http_status(body: dict) -> int:
    """200 once a client can connect (or the session failed: it never will), 202 while it waits, starts or is
    degraded (no route to give)."""
    return 200 if body["status"]["condition"] in (READY, FAILED) else 202
