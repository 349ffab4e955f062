"""API shapes of environment templates, versions, service profiles, the catalog and a launch.

Input serializers check the shape (types, unknown fields, choices) and hand the services their keyword
arguments (`service_fields()`); the rules across fields and against the template version are the services'
(profiles.validation), so pages that call the same services get the same answers."""

from drf_spectacular.utils import extend_schema_field
from rest_framework import serializers

from profiles.compose import OUTPUT_CONTEXT
from profiles.inputs import OVERRIDES, EffectiveInputs
from profiles.models import KINDS, EnvironmentTemplate, ServiceProfile, TemplateVersion
from profiles.variables import TYPES
from sharing.serializers import SharingSerializer
from studio.fields import Text
from studio.models import Project
from studio.serializers import NameField, StrictSerializer

VERSION_PATTERN = r"^[0-9]+(\.[0-9]+){1,2}(-[0-9A-Za-z.-]+)?$"
VERSION_RULE = "Use a version such as 1.0.0 (MAJOR.MINOR[.PATCH][-label])."


def _time(value) -> str:
    return serializers.DateTimeField().to_representation(value)


# --- environment templates -----------------------------------------------------------------------------

class VariableSerializer(StrictSerializer):
    name = serializers.CharField(max_length=63)
    type = serializers.ChoiceField(choices=TYPES)
    required = serializers.BooleanField(required=False, default=False)
    default = serializers.JSONField(required=False, allow_null=True, default=None)
    description = serializers.CharField(required=False, allow_blank=True, default="", max_length=2000)
    min = serializers.JSONField(required=False, allow_null=True, default=None)
    max = serializers.JSONField(required=False, allow_null=True, default=None)
    pattern = serializers.CharField(required=False, allow_null=True, allow_blank=True, default=None,
                                    max_length=500, trim_whitespace=False)
    options = serializers.ListField(child=serializers.CharField(max_length=253), required=False, allow_null=True,
                                    default=None, max_length=200)


class TemplateOutputSerializer(StrictSerializer):
    name = serializers.CharField(max_length=63)
    label = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    expression = serializers.CharField(max_length=2000, trim_whitespace=False,
                                       help_text=f"Text with {{{{ name }}}} of: {', '.join(OUTPUT_CONTEXT)}, "
                                                 "inputs.<variable>, generated.token.")
    sensitive = serializers.BooleanField(required=False, default=False)


class TemplateVersionSerializer(StrictSerializer):
    version = serializers.RegexField(VERSION_PATTERN, max_length=64, error_messages={"invalid": VERSION_RULE})
    templateId = serializers.IntegerField(source="template_id", read_only=True)
    kind = serializers.ChoiceField(choices=KINDS)
    specTemplate = serializers.DictField(source="spec_template", help_text="A workload spec; string values may hold {{ name }}.")
    variables = VariableSerializer(many=True, required=False)
    outputs = TemplateOutputSerializer(many=True, required=False)
    state = serializers.ChoiceField(choices=TemplateVersion.State.choices, required=False)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)

    def service_fields(self) -> dict:
        data = dict(self.validated_data)
        for key in ("variables", "outputs"):
            if key in data:
                data[key] = [dict(item) for item in data[key]]
        return data


class VersionSummarySerializer(serializers.Serializer):
    version = serializers.CharField()
    kind = serializers.CharField()
    state = serializers.CharField()


class EnvironmentTemplateSerializer(StrictSerializer):
    id = serializers.IntegerField(read_only=True)
    name = NameField()
    displayName = serializers.CharField(source="display_name", required=False, allow_blank=True, max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, max_length=5000)
    projectId = serializers.PrimaryKeyRelatedField(source="owner_project", queryset=Project.objects.all(),
                                                   required=False, allow_null=True)
    sharing = SharingSerializer(required=False)
    system = serializers.BooleanField(read_only=True)
    versions = VersionSummarySerializer(many=True, read_only=True)
    createdAt = serializers.DateTimeField(source="created_at", read_only=True)
    createdBy = serializers.CharField(source="created_by_name", read_only=True)
    updatedAt = serializers.DateTimeField(source="updated_at", read_only=True)

    def to_representation(self, template):
        return {
            "id": template.pk, "name": template.name, "displayName": template.display_name,
            "description": template.description, "projectId": template.owner_project_id,
            "sharing": template.sharing(), "system": template.system,
            "versions": VersionSummarySerializer(template.versions.all(), many=True).data,
            "createdAt": _time(template.created_at), "createdBy": template.created_by_name,
            "updatedAt": _time(template.updated_at),
        }

    def service_fields(self) -> dict:
        data = dict(self.validated_data)
        if "sharing" in data:
            data["sharing"] = dict(data["sharing"])
        return data


# --- service profiles ----------------------------------------------------------------------------------

class InputSettingSerializer(StrictSerializer):
    name = serializers.CharField(max_length=63)
    default = serializers.JSONField(required=False, allow_null=True, default=None)
    override = serializers.ChoiceField(choices=OVERRIDES, required=False, default="allowed")
    allowedValues = serializers.ListField(child=serializers.JSONField(), required=False, allow_null=True,
                                          default=None, max_length=200)
    required = serializers.BooleanField(required=False, default=False)
    visible = serializers.BooleanField(required=False, default=True)


class OutputSettingSerializer(StrictSerializer):
    name = serializers.CharField(max_length=63)
    label = serializers.CharField(required=False, allow_blank=True, default="", max_length=200)
    visible = serializers.BooleanField(required=False, default=True)
    sensitive = serializers.BooleanField(required=False, default=False)


@extend_schema_field({"oneOf": [{"type": "string"}, {"type": "integer"}]})
class TemplateRefField(serializers.Field):
    """A template by name, or by id."""

    def to_internal_value(self, data):
        if isinstance(data, bool) or not isinstance(data, (int, str)) or data == "":
            raise serializers.ValidationError("Give the template's name or id.")
        return data

    def to_representation(self, value):
        return value


def _text_map(**kwargs):
    # Text() takes strings only: a number here is a 400, not a silent "5".
    return serializers.DictField(child=Text(allow_blank=True, max_length=4096), required=False, **kwargs)


class ServiceProfileSerializer(StrictSerializer):
    id = serializers.IntegerField(read_only=True)
    name = NameField()
    displayName = serializers.CharField(source="display_name", required=False, allow_blank=True, max_length=200)
    description = serializers.CharField(required=False, allow_blank=True, max_length=5000)
    projectId = serializers.PrimaryKeyRelatedField(source="owner_project", queryset=Project.objects.all(),
                                                   required=False, allow_null=True)
    environmentTemplate = TemplateRefField()
    environmentTemplateVersion = serializers.CharField(max_length=64)
    serviceType = serializers.ChoiceField(source="service_type", choices=ServiceProfile.ServiceType.choices)
    iconUrl = serializers.URLField(source="icon_url", required=False, allow_blank=True, max_length=500)
    readme = serializers.CharField(required=False, allow_blank=True, max_length=100_000, trim_whitespace=False)
    labels = _text_map()
    annotations = _text_map()
    extraConfig = _text_map(source="extra_config")
    inputs = InputSettingSerializer(many=True, required=False)
    outputs = OutputSettingSerializer(many=True, required=False)
    sharing = SharingSerializer(required=False)

    def validate(self, attrs):
        template_ref = attrs.pop("environmentTemplate", None)
        version_ref = attrs.pop("environmentTemplateVersion", None)
        if template_ref is None and version_ref is None:
            return attrs
        current = self.instance.template_version if self.instance is not None else None
        if template_ref is None:
            template = current.template
        else:
            lookup = {"pk": template_ref} if isinstance(template_ref, int) else {"name": template_ref}
            template = EnvironmentTemplate.objects.filter(**lookup).first()
            if template is None:
                raise serializers.ValidationError({"environmentTemplate": ["No such environment template."]})
        if version_ref is None:
            raise serializers.ValidationError({"environmentTemplateVersion": ["Give the version of the template."]})
        version = template.versions.select_related("template").filter(version=version_ref).first()
        if version is None:
            raise serializers.ValidationError(
                {"environmentTemplateVersion": [f"Template {template.name} has no version {version_ref}."]})
        attrs["template_version"] = version
        return attrs

    def service_fields(self) -> dict:
        data = dict(self.validated_data)
        for key in ("inputs", "outputs"):
            if key in data:
                data[key] = [dict(item) for item in data[key]]
        for key in ("labels", "annotations", "extra_config", "sharing"):
            if key in data:
                data[key] = dict(data[key])
        return data

    def to_representation(self, profile):
        version = profile.template_version
        return {
            "id": profile.pk, "name": profile.name, "displayName": profile.display_name,
            "description": profile.description, "projectId": profile.owner_project_id,
            "environmentTemplate": version.template.name, "environmentTemplateId": version.template_id,
            "environmentTemplateVersion": version.version, "kind": version.kind,
            "serviceType": profile.service_type, "iconUrl": profile.icon_url, "readme": profile.readme,
            "readmeHtml": profile.readme_html, "labels": profile.labels, "annotations": profile.annotations,
            "extraConfig": profile.extra_config, "inputs": profile.inputs, "outputs": profile.outputs,
            "sharing": profile.sharing(), "revision": profile.revision, "system": profile.system,
            "draft": profile.is_draft, "createdAt": _time(profile.created_at), "createdBy": profile.created_by_name,
            "updatedAt": _time(profile.updated_at),
        }


class CatalogInputSerializer(serializers.Serializer):
    name = serializers.CharField()
    type = serializers.CharField()
    description = serializers.CharField()
    default = serializers.JSONField(allow_null=True)
    override = serializers.CharField()
    allowedValues = serializers.ListField(child=serializers.JSONField(), allow_null=True)
    required = serializers.BooleanField()
    min = serializers.JSONField(allow_null=True)
    max = serializers.JSONField(allow_null=True)
    pattern = serializers.CharField(allow_null=True)
    options = serializers.ListField(child=serializers.CharField(), allow_null=True)


def _str(value):
    return None if value is None else str(value)


def _int(value):
    return None if value is None else int(value)


class CatalogEntrySerializer(serializers.Serializer):
    """What an end user needs to choose and launch: visible inputs only, output labels, safe readme HTML."""

    id = serializers.IntegerField()
    name = serializers.CharField()
    displayName = serializers.CharField(source="display_name")
    description = serializers.CharField()
    serviceType = serializers.CharField(source="service_type")
    kind = serializers.CharField(source="template_version.kind")
    iconUrl = serializers.CharField(source="icon_src")
    readmeHtml = serializers.CharField(source="readme_html")
    revision = serializers.IntegerField()
    inputs = serializers.SerializerMethodField()
    outputs = serializers.SerializerMethodField()

    def to_representation(self, profile) -> dict:
        # Written out by hand, as DRF's fields render them (None stays None, CharField str(), IntegerField int()):
        # a catalog page renders 100 entries, and DRF's per-field machinery was half its CPU. The declared fields
        # above describe the shape in the OpenAPI schema.
        version = profile.template_version
        return {
            "id": _int(profile.id), "name": _str(profile.name), "displayName": _str(profile.display_name),
            "description": _str(profile.description), "serviceType": _str(profile.service_type),
            "kind": _str(version.kind), "iconUrl": _str(profile.icon_src), "readmeHtml": _str(profile.readme_html),
            "revision": _int(profile.revision), "inputs": self.get_inputs(profile),
            "outputs": self.get_outputs(profile),
        }

    @extend_schema_field(CatalogInputSerializer(many=True))
    def get_inputs(self, profile):
        merge = self.__dict__.get("_merge")
        if merge is None:  # one per page: the list's entries share this serializer (its child)
            merge = self.__dict__["_merge"] = EffectiveInputs()
        merged = merge(profile.template_version.variables, profile.inputs)
        return [item for item in merged if item.pop("visible")]  # fresh dicts: shown without their `visible`

    def get_outputs(self, profile) -> list[dict]:
        labels = {o["name"]: o["label"] for o in profile.template_version.outputs}
        return [{"name": s["name"], "label": s["label"] or labels.get(s["name"], s["name"])}
                for s in profile.outputs if s.get("visible", True)]


class LaunchSerializer(StrictSerializer):
    projectId = serializers.IntegerField(min_value=1)
    name = NameField()
    inputs = serializers.DictField(child=serializers.JSONField(allow_null=True), required=False, default=dict)


class CloneSerializer(StrictSerializer):
    name = NameField()
    displayName = serializers.CharField(required=False, allow_blank=False, max_length=200,
                                        help_text="The copy's display name; by default the source's with \" (copy)\".")
    projectId = serializers.IntegerField(min_value=1, required=False, allow_null=True)


class OutputSerializer(serializers.Serializer):
    name = serializers.CharField()
    label = serializers.CharField()
    sensitive = serializers.BooleanField(help_text="Shown masked until the user asks to see it.")
    value = serializers.CharField(allow_null=True)


class OutputsSerializer(serializers.Serializer):
    outputs = OutputSerializer(many=True)
