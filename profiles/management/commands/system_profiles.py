"""Installs the system environment templates and service profiles (profiles/system.py), shared with every
project. Idempotent: a second run changes nothing; after an edit of system.py it creates the new versions
and moves the profiles, whose revision then goes up."""

from django.core.management.base import BaseCommand
from django.db import transaction

from profiles import services
from profiles.models import EnvironmentTemplate, ServiceProfile, TemplateVersion
from profiles.system import PROFILES, TEMPLATES

SHARED_WITH_ALL = {"mode": "all", "projectIds": []}


class Command(BaseCommand):
    help = "Install or update the system environment templates and service profiles (idempotent)."

    @transaction.atomic
    def handle(self, *args, **options):
        for definition in TEMPLATES:
            self._template(definition)
        for definition in PROFILES:
            self._profile(definition)

    def _taken(self, kind: str, name: str) -> None:
        self.stderr.write(self.style.WARNING(f"Skipped system {kind} {name}: a non-system one has that name."))

    def _template(self, definition: dict) -> None:
        fields = {"display_name": definition["display_name"], "description": definition["description"]}
        template = EnvironmentTemplate.objects.filter(name=definition["name"]).first()
        if template is None:
            template = services.template_create(actor=None, name=definition["name"], system=True,
                                                sharing=SHARED_WITH_ALL, **fields)
            self.stdout.write(f"Created environment template {template.name}.")
        elif not template.system:
            return self._taken("environment template", template.name)
        else:
            services.template_update(actor=None, template=template, allow_system=True, sharing=SHARED_WITH_ALL,
                                     **fields)
        for version in definition["versions"]:
            if not template.versions.filter(version=version["version"]).exists():
                services.version_create(actor=None, template=template, state=TemplateVersion.State.ACTIVE,
                                        allow_system=True, **version)
                self.stdout.write(f"Created {template.name} {version['version']}.")

    def _profile(self, definition: dict) -> None:
        definition = dict(definition)
        name = definition.pop("name")
        template, version = definition.pop("template"), definition.pop("version")
        template_version = TemplateVersion.objects.filter(
            template__name=template, template__system=True, version=version).select_related("template").first()
        if template_version is None:
            return self._taken("environment template", template)
        profile = ServiceProfile.objects.filter(name=name).first()
        if profile is None:
            profile = services.profile_create(actor=None, name=name, template_version=template_version, system=True,
                                              sharing=SHARED_WITH_ALL, **definition)
            self.stdout.write(f"Created service profile {name}.")
        elif not profile.system:
            return self._taken("service profile", name)
        else:
            fields = {"labels": {}, "annotations": {}, "extra_config": {}, "inputs": [], "outputs": [], **definition}
            before = profile.revision
            profile = services.profile_update(actor=None, profile=profile, allow_system=True,
                                              template_version=template_version, sharing=SHARED_WITH_ALL, **fields)
            if profile.revision != before:
                self.stdout.write(f"Updated service profile {name} to revision {profile.revision}.")
