"""Forms of the Kit pages: applications, their versions and application profiles. As the profile pages do
(profiles.forms.ApiForm), a form only renders controls and turns what was posted into the `/cfg` request body;
the API's serializers and services validate it, and their errors are filed next to the controls they name."""

import re

from django import forms

from kit.models import ApplicationProfile
from kit.serializers import StreamPort
from profiles.forms import NAME_HTML, SHARING_CHOICES, ApiForm
from studio.ids import is_id, parse_id
from studio.typed_rows import Column, Fields, Rows, columns_of
from workloads.specs.parts import Compute, EnvironmentVariable, Toleration

WILDCARD_HELP = ("A row per application it serves, chosen among the known ones, with its versions separated by commas "
                 "(empty: every version). '*' as the id matches every application, '*' as a version every version: "
                 "\"* *\" serves all.")


# The profile's structured settings as typed inputs, generated from the serializers /cfg validates them with.
COMPUTE = columns_of(Compute, labels={"gpuDevicesRequest": "GPU devices", "gpuPortionRequest": "GPU portion",
                                      "gpuMemoryRequest": "GPU memory", "cpuCoreRequest": "CPU cores",
                                      "cpuMemoryRequest": "CPU memory", "largeShmRequest": "Large /dev/shm",
                                      "migProfile": "MIG profile"})
TOLERATION = columns_of(Toleration, only=("key", "operator", "value", "effect", "seconds"))
ENVIRONMENT = columns_of(EnvironmentVariable, only=("name", "value"))
PORT = columns_of(StreamPort)
NODE_LABEL = (Column("label", "Node label"), Column("value", "Value"))


def supported_rows(data, profile, applications) -> Rows:
    """Supported applications as rows: an application chosen among the known ones (or '*', or a name the profile
    already holds), and its versions."""
    held = [e.get("name", "") for e in (profile.supported_applications if profile is not None else ())
            if isinstance(e, dict)]
    names = ["*", *applications, *(n for n in held if n and n != "*" and n not in applications)]
    columns = (Column("name", "Application", "choice", tuple(dict.fromkeys(names))), Column("versions", "Versions", "texts"))
    return Rows("supportedApplications", columns, noun="Application", data=data,
                items=profile.supported_applications if profile is not None else ())


def typed_editors(data, profile) -> dict:
    has = profile is not None
    return {
        "compute": Fields("compute", COMPUTE, data=data, value=profile.compute if has else {}),
        "nodeSelector": Rows("nodeSelector", NODE_LABEL, noun="Node label", data=data, pairs=True,
                             items=[{"label": k, "value": v} for k, v in (profile.node_selector or {}).items()]
                             if has else ()),
        "tolerations": Rows("tolerations", TOLERATION, noun="Toleration", data=data,
                            items=profile.tolerations if has else ()),
        "environmentVariables": Rows("environmentVariables", ENVIRONMENT, noun="Variable", data=data,
                                     items=profile.environment if has else ()),
        "ports": Rows("ports", PORT, noun="Port", data=data, items=profile.ports if has else ()),
    }


def _words(text: str) -> list[str]:
    return [w for w in re.split(r"[\s,]+", text or "") if w]


class ApplicationForm(ApiForm):
    id = forms.CharField(label="Id", max_length=63, widget=forms.TextInput(attrs={"pattern": NAME_HTML}),
                         help_text="For example usd-viewer: lowercase letters, digits and '-'. It cannot change later.")
    name = forms.CharField(label="Name", max_length=200)
    description = forms.CharField(label="Description", required=False, widget=forms.Textarea(attrs={"rows": 3}))
    tags = forms.CharField(label="Tags", required=False, help_text="Separated by commas or spaces.")

    def __init__(self, data=None, *, app=None):
        initial = {}
        if app is not None:
            initial = {"id": app.id, "name": app.name, "description": app.description, "tags": ", ".join(app.tags)}
        super().__init__(data, initial=initial)
        self.editing = app is not None
        if self.editing:
            self.fields["id"].disabled = True

    def payload(self) -> dict:
        self.is_valid()
        body = {"name": self.cleaned_data["name"] or "", "description": self.cleaned_data["description"] or "",
                "tags": _words(self.cleaned_data["tags"])}
        if not self.editing:
            body["id"] = self.cleaned_data["id"] or ""
        return body


class VersionForm(ApiForm):
    version = forms.CharField(label="Version", max_length=128, help_text="A semantic version such as 1.2.3.")
    container = forms.CharField(label="Container image", max_length=255,
                                help_text="The image repository, e.g. nvcr.io/nvidia/omniverse/usd-viewer.")
    container_version = forms.CharField(label="Image tag", max_length=128)
    helm_chart = forms.CharField(label="Helm chart", required=False, max_length=255)
    helm_chart_version = forms.CharField(label="Helm chart version", required=False, max_length=128)

    def payload(self) -> dict:
        self.is_valid()
        body = {key: (value or "") for key, value in self.cleaned_data.items()}
        return {key: value for key, value in body.items() if value or key not in ("helm_chart", "helm_chart_version")}


class ProfileForm(ApiForm):
    """The profile's settings; the structured ones (compute, node selector, tolerations, environment, ports) as
    typed inputs and rows (`typed_editors`), generated from the serializers the API validates them with."""

    id = forms.CharField(label="Id", max_length=63, widget=forms.TextInput(attrs={"pattern": NAME_HTML}),
                         help_text="Lowercase letters, digits and '-'. It cannot change later.")
    name = forms.CharField(label="Name", max_length=200)
    description = forms.CharField(label="Description", required=False, widget=forms.Textarea(attrs={"rows": 2}))
    projectId = forms.CharField(label="Owner project", required=False, widget=forms.Select,
                                help_text="Its members may use it; share it with other projects below.")
    sharing_mode = forms.CharField(label="Share with", widget=forms.Select(choices=SHARING_CHOICES))
    sharing_projectIds = forms.MultipleChoiceField(label="Projects to share with", required=False,
                                                   widget=forms.CheckboxSelectMultiple,
                                                   help_text="With \"Selected projects\": at least one.")
    serviceType = forms.CharField(label="Load balancing", widget=forms.Select(
        choices=ApplicationProfile.ServiceType.choices), help_text="The type of the Service in front of the stream.")
    encryption = forms.CharField(label="Encryption", widget=forms.Select(choices=ApplicationProfile.Encryption.choices))
    tlsSecret = forms.CharField(label="TLS secret", required=False,
                                help_text="With encryption in the pod: the Secret holding its certificate.")
    authorization = forms.BooleanField(label="Require authorization", required=False)
    runtimeClassName = forms.CharField(label="Runtime class", required=False)
    idleTimeoutSeconds = forms.CharField(
        label="End a stream idle for (seconds)", required=False, widget=forms.NumberInput(attrs={"min": 60}),
        help_text="No request naming the session and no GPU activity for this long ends it; empty: never.")
    overCapacity = forms.CharField(
        label="Over the project's cap of streams", widget=forms.Select(choices=ApplicationProfile.OverCapacity.choices),
        help_text="A request over the cap waits in the project's queue, or is refused.")

    TYPED = ("compute", "nodeSelector", "tolerations", "environmentVariables", "ports")

    def __init__(self, data=None, *, profile: ApplicationProfile | None = None, projects=(), applications=()):
        initial = {"sharing_mode": "none", "authorization": True, "serviceType": "LoadBalancer", "encryption": "none",
                   "overCapacity": "queue"}
        if profile is not None:
            sharing = profile.sharing()
            initial = {
                "id": profile.slug, "name": profile.name, "description": profile.description,
                "projectId": profile.owner_project_id or "", "sharing_mode": sharing["mode"],
                "sharing_projectIds": [str(i) for i in sharing["projectIds"]], "serviceType": profile.service_type,
                "encryption": profile.encryption, "tlsSecret": profile.tls_secret,
                "authorization": profile.authorization, "runtimeClassName": profile.runtime_class_name,
                "idleTimeoutSeconds": profile.idle_timeout_seconds or "", "overCapacity": profile.over_capacity,
            }
        super().__init__(data, initial=initial)
        self.typed = typed_editors(data, profile)
        self.supported = supported_rows(data, profile, list(applications))
        self.supported_help = WILDCARD_HELP
        self.editing = profile is not None
        if self.editing:
            self.fields["id"].disabled = True
        self.fields["projectId"].widget.choices = [("", "None")] + [(str(p.pk), p.name) for p in projects]
        self.fields["sharing_projectIds"].choices = [(str(p.pk), p.name) for p in projects]

    def payload(self) -> dict | None:
        """The request body (what a typed input holds that does not fit its type goes as typed: the API names it)."""
        self.is_valid()
        data = self.cleaned_data
        body = {"name": data["name"] or "", "description": data["description"] or "",
                "supportedApplications": [{**item, "versions": item.get("versions") or ["*"]}
                                          for item in self.supported.items()],
                "loadBalancing": {"serviceType": data["serviceType"] or ""},
                "encryption": {"mode": data["encryption"] or ""},
                "authorization": bool(self["authorization"].data) if self.is_bound else True,
                "runtimeClassName": data["runtimeClassName"] or "",
                "overCapacity": data["overCapacity"] or ""}
        idle = (data["idleTimeoutSeconds"] or "").strip()
        body["idleTimeoutSeconds"] = (int(idle) if idle.isdigit() else idle) if idle else None
        if data["tlsSecret"]:
            body["encryption"]["tlsSecret"] = data["tlsSecret"]
        if not self.editing:
            body["id"] = data["id"] or ""
        project = (data["projectId"] or "").strip()
        if project:
            body["projectId"] = parse_id(project) if is_id(project) else project
        elif self.editing:
            body["projectId"] = None  # "None" chosen: the profile no longer has an owner project
        mode = data["sharing_mode"] or ""
        ids = data["sharing_projectIds"] or []
        body["sharing"] = {"mode": mode, "projectIds": [parse_id(str(i)) if is_id(str(i)) else i for i in ids]
                           if mode == "selected" else []}
        body["compute"] = self.typed["compute"].value()
        body["nodeSelector"] = self.typed["nodeSelector"].mapping()
        body["tolerations"] = self.typed["tolerations"].items()
        body["environmentVariables"] = self.typed["environmentVariables"].items()
        ports = self.typed["ports"].items()
        if ports:
            body["ports"] = ports
        return None if self.errors else body

    def file_profile_errors(self, errors: list[dict]) -> None:
        """The API's paths → this form's fields (a typed editor's cell first: an entry of supportedApplications is
        its row's)."""
        renamed = []
        for error in errors:
            if any(editor.file(error["field"], error["message"]) for editor in (*self.typed.values(), self.supported)):
                continue
            path = error["field"]
            for api, field in (("loadBalancing.serviceType", "serviceType"), ("loadBalancing", "serviceType"),
                               ("encryption.mode", "encryption"), ("encryption.tlsSecret", "tlsSecret"),
                               ("sharing.projectIds", "sharing_projectIds"), ("sharing.mode", "sharing_mode"),
                               ("sharing", "sharing_mode")):
                if path == api or path.startswith(api + ".") or path.startswith(api + "["):
                    path = field + path[len(api):]
                    break
            renamed.append({"field": path, "message": error["message"]})
        self.file_all(renamed)
