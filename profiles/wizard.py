"""The service profile wizard: General → Details → Input settings → Output settings → Sharing.

Each step reads what was posted into the body of a create (step 1 of a new profile) or a PATCH, which the
views hand to the API's serializer and service; `file(errors)` puts the API's errors next to the controls they
name (`labels.team`, `inputs.memory.default`, `inputs[2].override`, `sharing.projectIds`), and `step_errors`
are those that belong to no control. The only checks made here are those needed to build the body at all."""

import re

from profiles.forms import DetailsForm, GeneralForm, SharingForm, error_text, under
from profiles.models import ServiceProfile
from profiles.rendering import text
from sharing.models import SharingMode
from studio.ids import is_id, parse_id

OVERRIDE_CHOICES = [("allowed", "Allowed"), ("not-allowed", "Not allowed"), ("restricted", "Restricted to values")]


class GeneralStep:
    template = "profiles/steps/general.html"

    def __init__(self, data=None, *, profile, templates, projects, version_choices, **_):
        self.form = GeneralForm(data, profile=profile, templates=templates, projects=projects,
                                version_choices=version_choices)

    def payload(self) -> dict:
        return self.form.payload()

    def file(self, errors):
        self.form.file_all(errors)

    @property
    def step_errors(self):
        return self.form.non_field_errors()


class KeyValues:
    """Editable key/value rows, posted as `<field>-key` and `<field>-value` lists; one API object."""

    def __init__(self, field: str, title: str, help_text: str, initial: dict, data=None):
        self.field, self.title, self.help_text, self.errors = field, title, help_text, []
        if data is None:
            pairs = [(key, text(value)) for key, value in initial.items()]
        else:
            pairs = list(zip(data.getlist(f"{field}-key"), data.getlist(f"{field}-value"), strict=False))
        self.rows = [{"key": key.strip(), "value": value, "errors": []} for key, value in pairs
                     if key.strip() or value.strip()]

    def value(self) -> dict | None:
        out = {}
        for row in self.rows:
            if not row["key"]:
                row["errors"].append("Give a key, or clear the row.")
            elif row["key"] in out:
                row["errors"].append("Another row has this key.")
            else:
                out[row["key"]] = row["value"]
        return None if any(row["errors"] for row in self.rows) else out

    def file(self, path: str, message: str) -> None:
        for row in self.rows:
            if path == row["key"]:
                row["errors"].append(message)
                return
        self.errors.append(f"{path}: {message}" if path else message)

    def display_rows(self) -> list[dict]:
        return [*self.rows, {"key": "", "value": "", "errors": []}]  # one empty row to type into


class DetailsStep:
    template = "profiles/steps/details.html"

    def __init__(self, data=None, *, profile: ServiceProfile, **_):
        self.form = DetailsForm(data, initial={"iconUrl": profile.icon_url, "readme": profile.readme})
        self.maps = [
            KeyValues("labels", "Labels", "Attached to the workloads launched from it; for grouping and filtering.",
                      profile.labels, data),
            KeyValues("annotations", "Annotations", "Descriptive metadata attached to the workloads.",
                      profile.annotations, data),
            KeyValues("extraConfig", "Extra configuration",
                      "Key/value settings passed to the workloads as environment variables.", profile.extra_config,
                      data),
        ]

    def payload(self) -> dict | None:
        self.form.is_valid()
        values = {kv.field: kv.value() for kv in self.maps}
        if any(value is None for value in values.values()):
            return None
        return {"iconUrl": self.form.cleaned_data["iconUrl"], "readme": self.form.cleaned_data["readme"], **values}

    def file(self, errors):
        rest = []
        for error in errors:
            for kv in self.maps:
                tail = under(error["field"], kv.field)
                if tail is not None:
                    kv.file(tail, error["message"])
                    break
            else:
                rest.append(error)
        self.form.file_all(rest)

    @property
    def step_errors(self):
        return self.form.non_field_errors()


_SETTING_PATH = re.compile(r"^(?:\.(?P<name>[A-Za-z_][A-Za-z0-9_]*)|\[(?P<index>[0-9]+)\])(?:\.(?P<field>[A-Za-z]+))?")


class _Rows:
    """Rows of settings, one per template variable (or output), whose errors come as `<key>.<name>.<field>`
    from the services or `<key>[<index>].<field>` from the serializers."""

    key = ""

    def __init__(self):
        self.errors: list[str] = []
        self.rows: list[dict] = []

    def file(self, errors):
        by_name = {row["name"]: row for row in self.rows}
        for error in errors:
            under_key = under(error["field"], self.key) is not None
            match = _SETTING_PATH.match(error["field"][len(self.key):]) if under_key else None
            row = None
            if match and match["name"]:
                row = by_name.get(match["name"])
            elif match and int(match["index"]) < len(self.rows):
                row = self.rows[int(match["index"])]
            if row is None:
                self.errors.append(error_text(error))
            else:
                row["errors"].setdefault(match["field"] or "row", []).append(error["message"])

    @property
    def step_errors(self):
        return self.errors


class InputsStep(_Rows):
    """Input settings: per template variable, a default, whether users may override it (or only with listed
    values), and whether it is required or shown at all."""

    template = "profiles/steps/inputs.html"
    key = "inputs"
    override_choices = OVERRIDE_CHOICES

    def __init__(self, data=None, *, profile: ServiceProfile, **_):
        super().__init__()
        given = {setting["name"]: setting for setting in profile.inputs}
        for variable in profile.template_version.variables:
            name, setting = variable["name"], given.get(variable["name"], {})
            prefix = f"inputs.{name}"
            if data is None:
                values = {"default": text(setting.get("default")), "override": setting.get("override") or "allowed",
                          "allowedValues": ", ".join(text(v) for v in setting.get("allowedValues") or []),
                          "required": bool(setting.get("required")), "visible": setting.get("visible", True)}
            else:
                values = {"default": data.get(f"{prefix}.default", ""),
                          "override": data.get(f"{prefix}.override", "allowed"),
                          "allowedValues": data.get(f"{prefix}.allowedValues", ""),
                          "required": f"{prefix}.required" in data, "visible": f"{prefix}.visible" in data}
            choices = variable.get("options") if variable["type"] == "enum" else (
                ["true", "false"] if variable["type"] == "boolean" else None)
            self.rows.append({"name": name, "prefix": prefix, "variable": variable, "values": values, "errors": {},
                              "choices": choices, "template_default": text(variable.get("default"))})

    def payload(self) -> dict:
        inputs = []
        for row in self.rows:
            values = row["values"]
            restricted = values["override"] == "restricted"
            allowed = [v.strip() for v in values["allowedValues"].split(",") if v.strip()]
            inputs.append({"name": row["name"], "default": values["default"].strip() or None,
                           "override": values["override"], "allowedValues": allowed if restricted else None,
                           "required": values["required"], "visible": values["visible"]})
        return {"inputs": inputs}


class OutputsStep(_Rows):
    """Output settings: which of the template's outputs end users see after launch, and their labels."""

    template = "profiles/steps/outputs.html"
    key = "outputs"

    def __init__(self, data=None, *, profile: ServiceProfile, **_):
        super().__init__()
        given = {setting["name"]: setting for setting in profile.outputs}
        for output in profile.template_version.outputs:
            name, setting = output["name"], given.get(output["name"], {})
            prefix = f"outputs.{name}"
            if data is None:
                values = {"label": setting.get("label") or output["label"], "visible": setting.get("visible", True),
                          "sensitive": bool(setting.get("sensitive") or output["sensitive"])}
            else:
                values = {"label": data.get(f"{prefix}.label", ""), "visible": f"{prefix}.visible" in data,
                          "sensitive": f"{prefix}.sensitive" in data}
            self.rows.append({"name": name, "prefix": prefix, "output": output, "values": values, "errors": {}})

    def payload(self) -> dict:
        return {"outputs": [{"name": row["name"], "label": row["values"]["label"].strip(),
                             "visible": row["values"]["visible"],
                             # the template's sensitive outputs stay sensitive (their checkbox is disabled)
                             "sensitive": row["values"]["sensitive"] or row["output"]["sensitive"]}
                            for row in self.rows]}


class SharingStep:
    template = "profiles/steps/sharing.html"

    def __init__(self, data=None, *, profile: ServiceProfile, projects, **_):
        sharing = profile.sharing()
        self.form = SharingForm(data, initial={"mode": sharing["mode"], "projectIds": sharing["projectIds"]})
        self.form.fields["projectIds"].choices = [(p.pk, p.name) for p in projects]

    def payload(self) -> dict:
        self.form.is_valid()
        mode, ids = self.form.cleaned_data["mode"], self.form.cleaned_data["projectIds"] or []
        project_ids = [parse_id(str(i)) if is_id(str(i)) else i for i in ids] if mode == SharingMode.SELECTED else []
        return {"sharing": {"mode": mode or "", "projectIds": project_ids}}

    def file(self, errors):
        self.form.file_all(errors, prefix="sharing")

    @property
    def step_errors(self):
        return self.form.non_field_errors()


STEPS = {"general": ("General", GeneralStep), "details": ("Details", DetailsStep),
         "inputs": ("Input settings", InputsStep), "outputs": ("Output settings", OutputsStep),
         "sharing": ("Sharing", SharingStep)}
STEP_NAMES = list(STEPS)
