"""The typed form of each asset kind, generated from its field table (assets/specs.py): one input per scalar field
(nested objects flattened, `claimInfo.size`), lists as text (a list of choices separated by commas, a list of
objects as JSON), another asset as a choice of those the user sees. The form only shapes Run:ai's request body;
the rules and their messages are the services' (assets/services.py), filed back on the fields they name, every
one at once.

Secret fields are write-only: a password input that never renders its value back, on an error either."""

import json
import re

from django import forms

from assets.models import Asset, Kind, Scope
from assets.specs import KINDS, REFERENCES, updatable
from studio.typed_rows import label_of

_INT = re.compile(r"-?\d+")
_NUMBER = re.compile(r"-?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?")
# What the asset pages call each family, the kinds in it, and each kind's label.
FAMILIES = {
    "environments": ("Environments", (Kind.ENVIRONMENT,)),
    "compute-resources": ("Compute resources", (Kind.COMPUTE,)),
    "data-sources": ("Data sources", (Kind.PVC, Kind.NFS, Kind.S3, Kind.GIT, Kind.HOST_PATH, Kind.CONFIG_MAP,
                                      Kind.SECRET_VOLUME)),
    "credentials": ("Credentials", (Kind.ACCESS_KEY, Kind.PASSWORD, Kind.DOCKER_REGISTRY, Kind.GENERIC_SECRET,
                                    Kind.NGC_API_KEY)),
}
KIND_LABELS = {"environment": "Environment", "compute": "Compute resource", "pvc": "PVC", "nfs": "NFS",
               "s3": "S3 bucket", "git": "Git repository", "hostPath": "Host path", "config-map": "ConfigMap",
               "secret-volume": "Secret", "accessKey": "Access key", "password": "User and password",
               "dockerRegistry": "Docker registry", "genericSecret": "Generic secret", "ngcApiKey": "NGC API key"}
FAMILY_OF = {kind: family for family, (_, kinds) in FAMILIES.items() for kind in kinds}
# Shorter labels of nested fields: "Probes readiness handler http get port" reads "Readiness probe HTTP port".
_LABEL_PREFIXES = (("Probes readiness handler http get ", "Readiness probe HTTP "),
                   ("Probes readiness ", "Readiness probe "), ("Claim info access modes ", "Access mode "),
                   ("Claim info ", "Claim "))


def field_label(dotted: str) -> str:
    label = label_of(dotted)
    for long, short in _LABEL_PREFIXES:
        if label.startswith(long):
            return short + label[len(long):]
    return label


def _flat(fields: dict, prefix: str = ""):
    """(dotted name, rule) of every field, nested objects' fields flattened."""
    for name, rule in fields.items():
        dotted = f"{prefix}{name}"
        if rule.kind == "object":
            yield from _flat(rule.fields, f"{dotted}.")
        else:
            yield dotted, rule


def _get(value, dotted: str):
    for part in dotted.split("."):
        if not isinstance(value, dict):
            return None
        value = value.get(part)
    return value


def _set(target: dict, dotted: str, value) -> None:
    *parents, last = dotted.split(".")
    for part in parents:
        target = target.setdefault(part, {})
    target[last] = value


def scope_choices(user, kind: str, *, units) -> list[tuple[str, str]]:
    """("project:7", "Project alpha")… for each scope the user may create an asset of `kind` in."""
    from assets import access

    choices = []
    for key, label, fields in units:
        probe = Asset(kind=kind, **fields)
        if access.manages(user, probe):
            choices.append((key, label))
    return choices


# The fields a kind's form shows first; the rest wait under "More settings" (open when one holds a value or an error).
ESSENTIAL = {
    "environment": ("spec.image", "spec.imagePullPolicy", "spec.command", "spec.args", "spec.workingDir",
                    "spec.environmentVariables", "spec.connections"),
    "compute": ("spec.gpuDevicesRequest", "spec.gpuRequestType", "spec.gpuPortionRequest", "spec.gpuMemoryRequest",
                "spec.migProfile", "spec.cpuCoreRequest", "spec.cpuMemoryRequest"),
    "pvc": ("spec.path", "spec.existingPvc", "spec.claimName", "spec.claimInfo.size", "spec.claimInfo.storageClass",
            "spec.claimInfo.accessModes.readWriteOnce", "spec.readOnly"),
}


class WriteOnlyTextarea(forms.Textarea):
    """A textarea of secrets: what was typed is never rendered back (an error shows the form again empty)."""

    def get_context(self, name, value, attrs):
        return super().get_context(name, None, attrs)


class AssetForm(forms.Form):
    """Name, description, scope (on create) and the kind's spec fields; `body()` is Run:ai's request body."""

    use_required_attribute = False  # every problem comes back at once from the service, not one by one

    name = forms.CharField(label="Name", max_length=200, required=False,
                           help_text="Lower case letters, digits and '-', starting with a letter.")
    description = forms.CharField(label="Description", max_length=500, required=False,
                                  widget=forms.Textarea(attrs={"rows": 2}))

    def __init__(self, data=None, *, kind: str, asset: Asset | None = None, scopes=(), references=None):
        super().__init__(data)
        self.kind, self.asset = kind, asset
        self.specs: dict[str, object] = {}
        creating = asset is None
        if creating:
            self.fields["scope"] = forms.ChoiceField(label="Scope", choices=[("", "Choose a scope…"), *scopes],
                                                     required=False, help_text="Who may use it: everyone in the "
                                                     "scope and the scopes below it.")
        changeable = updatable(kind)
        shown = asset.spec if asset is not None else {}
        for dotted, rule in _flat(KINDS[kind][0]):
            top = dotted.split(".")[0]
            if not creating and changeable is not None and top not in changeable:
                continue  # a field a PUT may not change is shown on the page, not offered
            if rule.secret and not creating:
                continue
            field = self._field(dotted, rule, references or {})
            value = _get(shown, dotted)
            if value is not None and not rule.secret:
                field.initial = self._text(rule, value)
            key = f"spec.{dotted}"
            self.fields[key] = field
            self.specs[key] = rule
        if kind == Kind.GENERIC_SECRET and creating:
            self.fields["spec.keyValuePairs"] = forms.CharField(
                label="Keys and values", required=False,
                widget=WriteOnlyTextarea(attrs={"rows": 3, "autocomplete": "off"}),
                help_text="One KEY=value a line. Never shown again once saved.")
            self.specs.pop("spec.keyValuePairs", None)
        if asset is not None:
            self.fields["name"].initial = asset.name
            self.fields["description"].initial = asset.description

    def _essential(self, key: str) -> bool:
        chosen = ESSENTIAL.get(self.kind)
        return chosen is None or not key.startswith("spec.") or key in chosen

    def first_fields(self) -> list:
        return [self[key] for key in self.fields if self._essential(key)]

    def more_fields(self) -> list:
        return [self[key] for key in self.fields if not self._essential(key)]

    def more_open(self) -> bool:
        """Whether "More settings" starts open: one of its fields holds a value or an error."""
        return any(field.errors or (field.value() not in (None, "")) for field in self.more_fields())

    def _field(self, dotted: str, rule, references: dict):
        label = field_label(dotted)
        if rule.secret:
            return forms.CharField(label=label, required=False, help_text="Write-only: never shown again.",
                                   widget=forms.PasswordInput(render_value=False, attrs={"autocomplete": "new-password"}))
        if (self.kind, dotted) in REFERENCES:
            options = references.get((self.kind, dotted), [])
            return forms.ChoiceField(label=label, required=False, choices=[("", "—"), *options])
        if rule.kind == "boolean":
            return forms.ChoiceField(label=label, required=False, choices=[("", "—"), ("true", "Yes"), ("false", "No")])
        if rule.kind == "choice":
            return forms.ChoiceField(label=label, required=False, choices=[("", "—"), *[(c, c) for c in rule.choices]])
        if rule.kind == "list" and rule.items is not None and rule.items.kind == "choice":
            return forms.CharField(label=label, required=False, help_text="Separated by commas.")
        if rule.kind == "list":
            return forms.CharField(label=label, required=False, widget=forms.Textarea(attrs={"rows": 3}),
                                   help_text="A JSON list of objects, as the API takes it.")
        attrs = {"inputmode": "decimal"} if rule.kind in ("integer", "number") else {}
        if rule.kind == "quantity":
            attrs["placeholder"] = "e.g. 1Gi"
        return forms.CharField(label=label, required=False, widget=forms.TextInput(attrs=attrs))

    @staticmethod
    def _text(rule, value) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if rule.kind == "list" and rule.items is not None and rule.items.kind == "choice":
            return ", ".join(str(v) for v in value)
        if isinstance(value, (list, dict)):
            return json.dumps(value, indent=1)
        return str(value)

    @staticmethod
    def _typed(rule, raw: str, problems: list, key: str):
        raw = raw.strip()
        if rule.kind == "integer" and _INT.fullmatch(raw):
            return int(raw)
        if rule.kind == "number" and _NUMBER.fullmatch(raw):
            number = float(raw)
            return int(number) if number.is_integer() and "." not in raw else number
        if rule.kind == "boolean":
            return {"true": True, "false": False}.get(raw, raw)
        if rule.kind == "list" and rule.items is not None and rule.items.kind == "choice":
            return [part.strip() for part in raw.split(",") if part.strip()]
        if rule.kind == "list":
            try:
                return json.loads(raw)
            except ValueError as exc:
                problems.append((key, f"Not valid JSON: {exc}."))
                return None
        return raw  # the service names a wrong type ("Must be an integer.")

    def body(self) -> dict:
        """Run:ai's creation or update body from what was typed; what cannot even be read (bad JSON, a bad KEY=value
        line) is kept in `self.local_problems` to be shown beside the service's."""
        data = self.cleaned_data
        self.local_problems: list[tuple[str, str]] = []
        meta = {"name": data.get("name") or None if self.asset is None else data.get("name") or self.asset.name,
                "description": data.get("description", "")}
        if self.asset is None:
            meta.update(_scope_meta(data.get("scope", "")))
        spec: dict = {}
        for key, rule in self.specs.items():
            raw = data.get(key) or ""
            if raw.strip():
                value = self._typed(rule, raw, self.local_problems, key)
                if value is not None:
                    _set(spec, key.removeprefix("spec."), value)
        if "spec.keyValuePairs" in self.fields and (data.get("spec.keyValuePairs") or "").strip():
            pairs = []
            for number, line in enumerate(data["spec.keyValuePairs"].splitlines(), start=1):
                if not line.strip():
                    continue
                key, sep, value = line.partition("=")
                if not sep:
                    self.local_problems.append(("spec.keyValuePairs", f"Line {number}: write KEY=value."))
                    continue
                pairs.append({"key": key.strip(), "value": value})
            spec["keyValuePairs"] = pairs
        return {"meta": meta, "spec": spec}

    def file(self, path: str, message: str) -> None:
        """A problem the service named (`meta.name`, `spec.claimInfo.size`, `spec.connections[0].name`) on its field,
        else on the form."""
        if path.startswith("meta."):
            name = path.removeprefix("meta.")
            key = {"projectId": "scope", "departmentId": "scope", "clusterId": "scope", "private": "scope"}.get(name, name)
        else:
            key = path
        tail = ""
        if key not in self.fields and "[" in key:
            key, bracket, rest = key.partition("[")
            tail = f"[{rest}: "
        if key in self.fields:
            self.add_error(key, f"{tail}{message}" if tail else message)
        else:
            self.add_error(None, f"{path}: {message}" if path else message)


def _scope_meta(value: str) -> dict:
    scope, _, rest = value.partition(":")
    if scope == Scope.TENANT:
        return {"scope": "tenant"}
    if scope == Scope.CLUSTER:
        return {"scope": "cluster", "clusterId": rest}
    if scope == Scope.DEPARTMENT:
        return {"scope": "department", "departmentId": rest}
    if scope == Scope.PROJECT:
        private = rest.endswith(":private")
        return {"scope": "project", "projectId": rest.removesuffix(":private"), "private": private}
    return {"scope": None}
