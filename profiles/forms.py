"""Forms of the profile pages. They render the controls (labels, HTML5 attributes) and turn what was posted into
the API's request body; the API's serializers and services validate that body (one set of rules, one set of
messages), and their errors, as `studio.errors.flatten_errors` paths, are filed next to the controls they name.
The only checks made here are those the page needs to build a body at all (JSON text, key/value rows)."""

import json
import secrets
import string

from django import forms
from django.core.exceptions import ValidationError as DjangoValidationError
from django.forms.utils import ErrorDict
from django.urls import reverse
from rest_framework.exceptions import ValidationError

from profiles.models import KINDS, ServiceProfile, TemplateVersion
from profiles.rendering import text
from sharing.models import SharingMode
from studio.errors import Conflict, flatten_errors
from studio.ids import is_id, parse_id

# studio.names.NAME_PATTERN and studio.clusters.quantities.QUANTITY_RE in the syntax of the HTML pattern attribute
# (JavaScript's `v` mode, where a '-' in a class must be escaped).
NAME_HTML = r"[a-z]([a-z0-9\-]{0,61}[a-z0-9])?"
QUANTITY_HTML = r"([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+\-]?[0-9]+|[KMGTPE]i|[numkMGTPE])?"
SERVICE_TYPES = [("notebook", "Notebook"), ("inference", "Inference"), ("jobs", "Jobs"), ("custom", "Custom service")]
SHARING_CHOICES = [(SharingMode.NONE, "None (only the owner project)"), (SharingMode.ALL, "All projects"),
                   (SharingMode.SELECTED, "Selected projects")]


def api_errors(exc) -> list[dict]:
    """[{field, message}] of what the serializers and services raised, as the API's 400 body lists them."""
    if isinstance(exc, DjangoValidationError):
        return flatten_errors(exc.message_dict if hasattr(exc, "error_dict") else {"": exc.messages})
    if isinstance(exc, ValidationError):
        return flatten_errors(exc.detail)
    return [{"field": "", "message": str(getattr(exc, "detail", exc))}]


def write_errors(exc, *, conflict_field: str) -> list[dict]:
    """The API's errors of a write; a 409 (a taken name) belongs to the field that holds the name."""
    if isinstance(exc, Conflict):
        return [{"field": conflict_field, "message": str(exc.detail)}]
    return api_errors(exc)


def error_text(error: dict) -> str:
    """An error shown away from its field names the field's path."""
    return f"{error['field']}: {error['message']}" if error["field"] else error["message"]


def under(path: str, prefix: str) -> str | None:
    """`path` without `prefix.`, or None when it is not under it."""
    if path == prefix:
        return ""
    if path.startswith(prefix + ".") or path.startswith(prefix + "["):
        return path[len(prefix):].lstrip(".")
    return None


class ApiForm(forms.Form):
    """Fields with the API's names and no rules of their own: the form renders controls and reads what was
    posted; `file_errors` puts the API's errors next to them."""

    def full_clean(self):
        self._errors = ErrorDict()
        self.cleaned_data = {name: self[name].data for name, field in self.fields.items()
                             if self.is_bound and not field.disabled}

    def file_errors(self, errors: list[dict], *, prefix: str = "") -> list[dict]:
        """File each error under its field (the path's first name, after `prefix`); the rest are returned."""
        rest = []
        names = sorted(self.fields, key=len, reverse=True)  # the longest first: `inputs.memory` before `inputs`
        for error in errors:
            path = error["field"] if not prefix else under(error["field"], prefix)
            head = next((name for name in names if path and under(path, name) is not None), None)
            if head is None:
                rest.append(error)
                continue
            tail = under(path, head)
            self.add_error(head, f"{tail}: {error['message']}" if tail else error["message"])
        return rest

    def payload(self) -> dict:
        self.is_valid()
        return dict(self.cleaned_data)

    def file_all(self, errors: list[dict], *, prefix: str = "") -> None:
        """File every error: under its field, or else above the form with its path."""
        for error in self.file_errors(errors, prefix=prefix):
            self.add_error(None, error_text(error))


def _select(**attrs):
    return forms.Select(attrs=attrs)


# The catalog section a template's kind belongs in: what the wizard proposes once a version is chosen.
SERVICE_TYPE_OF_KIND = {"workspace": "notebook", "inference": "inference", "training": "jobs", "distributed": "jobs"}


class VersionSelect(forms.Select):
    """The version select: each option says its version's workload kind (data-kind), for the service type."""

    kinds: dict[str, str] = {}

    def create_option(self, name, value, label, selected, index, subindex=None, attrs=None):
        option = super().create_option(name, value, label, selected, index, subindex, attrs)
        if self.kinds.get(str(value)):
            option["attrs"]["data-kind"] = self.kinds[str(value)]
        return option


# --- the forms of the wizard's steps (profiles.wizard) ------------------------------------------------------

class GeneralForm(ApiForm):
    name = forms.CharField(label="Unique name", max_length=63, help_text=(
        "For example jupyter-notebook: lowercase letters, digits and '-'. It cannot be changed once created."),
        widget=forms.TextInput(attrs={"pattern": NAME_HTML, "autocomplete": "off"}))
    displayName = forms.CharField(label="Display name", required=False, max_length=200,
                                  help_text="The friendly name end users see, such as Jupyter Notebook.")
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 3}))
    projectId = forms.CharField(label="Owner project", required=False, widget=forms.Select,
                                help_text="Profiles are scoped to their project; share them with others later.")
    environmentTemplate = forms.CharField(label="Environment template", widget=forms.Select)
    environmentTemplateVersion = forms.CharField(label="Environment template version", widget=VersionSelect)
    serviceType = forms.CharField(label="Service type", required=False, widget=_select(), help_text=(
        "The catalog section end users find it in; left empty, the template's kind decides (a workspace is a "
        "notebook, an inference an inference, a training a job)."))

    def __init__(self, data=None, *, profile: ServiceProfile | None, templates, projects, version_choices):
        initial = {}
        if profile is not None:
            version = profile.template_version
            initial = {"name": profile.name, "displayName": profile.display_name, "description": profile.description,
                       "projectId": profile.owner_project_id or "", "environmentTemplate": version.template.name,
                       "environmentTemplateVersion": version.version, "serviceType": profile.service_type}
        super().__init__(data, initial=initial)
        self.editing = profile is not None
        if self.editing:
            self.fields["name"].disabled = True
        self.fields["projectId"].widget.choices = [("", "None (platform)")] + [(p.pk, p.name) for p in projects]
        self.fields["environmentTemplate"].widget.choices = [("", "Choose a template")] + [
            (t.name, t.display_name or t.name) for t in templates]
        self.fields["serviceType"].widget.choices = [("", "Choose a type")] + SERVICE_TYPES
        # htmx: choosing a template loads its versions into the next select
        self.fields["environmentTemplate"].widget.attrs.update(
            {"hx-get": reverse("profile-version-options"), "hx-target": "#id_environmentTemplateVersion"})
        chosen = (data or {}).get("environmentTemplate", initial.get("environmentTemplate", ""))
        options = version_choices(chosen)
        self.fields["environmentTemplateVersion"].widget.choices = [(value, label) for value, label, _ in options]
        self.fields["environmentTemplateVersion"].widget.kinds = {value: kind for value, _, kind in options if kind}

    def payload(self) -> dict:
        self.is_valid()
        data = self.cleaned_data
        body = {key: data[key] for key in ("displayName", "description", "environmentTemplate",
                                           "environmentTemplateVersion", "serviceType")}
        if not body["serviceType"]:  # none chosen: the one of the chosen version's kind
            kind = self.fields["environmentTemplateVersion"].widget.kinds.get(body["environmentTemplateVersion"] or "")
            body["serviceType"] = SERVICE_TYPE_OF_KIND.get(kind, "")
        project = (data["projectId"] or "").strip()
        body["projectId"] = parse_id(project) if is_id(project) else (project or None)
        if not self.editing:
            body["name"] = data["name"]
        return body


class DetailsForm(ApiForm):
    iconUrl = forms.CharField(label="Icon URL", required=False, max_length=500,
                              help_text="Shown on the profile's card in the catalog.", widget=forms.URLInput)
    readme = forms.CharField(label="Readme", required=False, help_text="Plain text or Markdown, shown to end users.",
                             widget=forms.Textarea(attrs={"rows": 8}))


class SharingForm(ApiForm):
    mode = forms.CharField(label="Share with", widget=forms.RadioSelect(choices=SHARING_CHOICES))
    projectIds = forms.MultipleChoiceField(label="Projects", required=False, widget=forms.CheckboxSelectMultiple)


# --- environment templates ------------------------------------------------------------------------------

class TemplateForm(ApiForm):
    name = forms.CharField(label="Unique name", max_length=63, widget=forms.TextInput(attrs={"pattern": NAME_HTML}))
    displayName = forms.CharField(label="Display name", required=False, max_length=200)
    description = forms.CharField(required=False, widget=forms.Textarea(attrs={"rows": 2}))


def _json_field(label: str, help_text: str, rows: int = 6):
    return forms.CharField(label=label, required=False, help_text=help_text,
                           widget=forms.Textarea(attrs={"rows": rows, "spellcheck": "false", "class": "code"}))


class VersionForm(ApiForm):
    version = forms.CharField(label="Version", max_length=64, help_text="For example 1.0.0.")
    kind = forms.CharField(label="Workload kind", widget=_select())
    specTemplate = _json_field("Spec template (JSON)", "A workload spec; string values may hold {{ variable }}.", 10)
    variables = _json_field("Variables (JSON list)", 'For example [{"name": "gpus", "type": "integer", "default": 1}].')
    outputs = _json_field("Outputs (JSON list)",
                          'For example [{"name": "url", "label": "URL", "expression": "{{ workload.url }}"}].')
    state = forms.CharField(label="State", widget=_select(), help_text="Only an active version can back a profile.")

    JSON_FIELDS = {"specTemplate": {}, "variables": [], "outputs": []}

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["kind"].widget.choices = [(k, k) for k in KINDS]
        self.fields["state"].widget.choices = [(TemplateVersion.State.DRAFT, "Draft"),
                                               (TemplateVersion.State.ACTIVE, "Active")]

    def payload(self) -> dict | None:
        self.is_valid()
        body = {"version": self.cleaned_data["version"], "kind": self.cleaned_data["kind"],
                "state": self.cleaned_data["state"]}
        for field, empty in self.JSON_FIELDS.items():
            raw = (self.cleaned_data[field] or "").strip()
            try:
                body[field] = json.loads(raw) if raw else empty
            except ValueError as exc:
                self.add_error(field, f"Not valid JSON: {exc}.")
        return None if self.errors else body


class CloneForm(ApiForm):
    """A clone asks for its owner project (whose catalog it lands in) and a new name."""

    projectId = forms.ChoiceField(label="Owner project", help_text=(
        "The copy belongs to this project and appears in its catalog; share it with others afterwards."))
    name = forms.CharField(label="Name of the copy", max_length=63, widget=forms.TextInput(attrs={"pattern": NAME_HTML}),
                           help_text="Unique name: lowercase letters, digits and dashes; it cannot change later.")
    displayName = forms.CharField(label="Display name of the copy", max_length=200,
                                  help_text="What end users see in the catalog.")

    def __init__(self, *args, projects=(), **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["projectId"].choices = [("", "Choose a project")] + [(str(p.pk), p.name) for p in projects]


# --- launch from the catalog ------------------------------------------------------------------------------

UNITS = {"cpu": "cores"}


def _label(item: dict) -> str:
    """What a person reads: the input's description (its first sentence) rather than the variable's name."""
    description = (item.get("description") or "").strip()
    first = description.split(". ")[0].rstrip(".") if description else ""
    if first and len(first) <= 60:
        return first
    return item["name"].replace("_", " ").capitalize()


def _hints(item: dict) -> list[str]:
    """Help under the control: the rest of the description, the range with its unit, the allowed values and
    the variable's own name (what the API and the template call it)."""
    hints = []
    description = (item.get("description") or "").strip()
    if description and description.rstrip(".") != _label(item):
        hints.append(description)
    low, high = item.get("min"), item.get("max")
    if item["type"] in ("integer", "number") and (low is not None or high is not None):
        unit = next((u for key, u in UNITS.items() if key in item["name"]), "")
        span = f"between {text(low)} and {text(high)}" if low is not None and high is not None else (
            f"at least {text(low)}" if low is not None else f"at most {text(high)}")
        hints.append(f"A number {span}{f' ({unit})' if unit else ''}.")
    if item["override"] == "restricted" and item.get("allowedValues"):
        hints.append("Allowed: " + ", ".join(text(v) for v in item["allowedValues"]) + ".")
    return hints


def _input_field(item: dict) -> forms.Field:
    """The control of one catalog input: its type as the input type, its constraints as HTML5 attributes.
    Inputs the profile fixes are shown, disabled, with their value."""
    kind, default = item["type"], item["default"]
    fixed = item["override"] == "not-allowed"
    attrs = {}
    hints = _hints(item)
    choices = item["allowedValues"] if item["override"] == "restricted" else item["options"] if kind == "enum" else None
    if choices is not None:
        blank = [("", "Choose…" if item["required"] else "None")] if default is None else []
        widget = forms.Select(choices=blank + [(text(c), text(c)) for c in choices])
    elif kind == "boolean":
        return forms.BooleanField(label=_label(item), required=False, disabled=fixed, initial=bool(default),
                                  help_text=" ".join([*hints, f"Setting {item['name']}."]))
    elif kind in ("integer", "number"):
        attrs["step"] = "1" if kind == "integer" else "any"
        attrs.update({bound: text(item[bound]) for bound in ("min", "max") if item[bound] is not None})
        widget = forms.NumberInput(attrs=attrs)
    elif kind == "secret":
        attrs["autocomplete"] = "new-password"
        if item["pattern"]:
            attrs["data-pattern"] = item["pattern"]
        widget = forms.PasswordInput(attrs=attrs)
    else:
        if kind == "quantity":
            attrs["pattern"] = QUANTITY_HTML
            hints.append("A quantity such as 1Gi, 500m or 2" + "".join(
                f"; {word} {text(item[bound])}" for bound, word in (("min", "at least"), ("max", "at most"))
                if item[bound] is not None) + ".")
        elif item["pattern"]:
            # A Python regular expression: static/studio/launch.js checks it where JavaScript reads it alike
            # (the pattern attribute would log an error for one JavaScript cannot compile).
            attrs["data-pattern"] = item["pattern"]
        widget = forms.TextInput(attrs=attrs)
    if fixed:
        hints.append("Set by the profile.")
    hints.append(f"Setting {item['name']}.")
    return forms.CharField(label=_label(item), required=item["required"], disabled=fixed, widget=widget,
                           initial=text(default), help_text=" ".join(hints))


class LaunchForm(ApiForm):
    name = forms.CharField(label="Workload name", max_length=63, widget=forms.TextInput(
        attrs={"pattern": NAME_HTML, "autocomplete": "off"}), help_text="Lowercase letters, digits and '-'.")

    def __init__(self, data=None, *, inputs: list[dict], default_name: str = ""):
        super().__init__(data, initial={"name": default_name} if default_name else None)
        self.inputs = inputs
        for item in inputs:
            self.fields[f"inputs.{item['name']}"] = _input_field(item)

    def payload(self, project_id: int) -> dict:
        self.is_valid()
        values = {}
        for item in self.inputs:
            key = f"inputs.{item['name']}"
            if key in self.cleaned_data and self.cleaned_data[key] not in (None, ""):
                values[item["name"]] = self.cleaned_data[key]
        return {"projectId": project_id, "name": self.cleaned_data["name"], "inputs": values}


class TryForm(LaunchForm):
    """The wizard's "Try it": a launch form with the project to try it in (any project, for a platform admin)."""

    def __init__(self, data=None, *, inputs: list[dict], projects: list[tuple[str, str]], initial_project=None):
        super().__init__(data, inputs=inputs)
        self.fields = {"projectId": forms.ChoiceField(
            label="Try in project", choices=projects, initial=initial_project,
            help_text="Tried as a launch in this project: its quota, policy and cluster decide."), **self.fields}


def default_workload_name(profile_name: str) -> str:
    """The launch form's first name: the profile's and four random letters/digits (`jupyter-4k2x`), a DNS label
    that seldom collides; the user may type another."""
    alphabet = string.ascii_lowercase + string.digits
    return f"{profile_name[:58].rstrip('-')}-{''.join(secrets.choice(alphabet) for _ in range(4))}"
