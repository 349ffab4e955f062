"""factory_boy factories for the rows tests need; every app's tests import from here."""

import factory
from django.contrib.auth import get_user_model
from django.contrib.auth.models import Group

from studio.models import PLATFORM_ADMINS_GROUP, Cluster, Department, Membership, Project


class UserFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = get_user_model()
        django_get_or_create = ("username",)
        skip_postgeneration_save = True

    username = factory.Sequence(lambda n: f"user{n}")
    email = factory.LazyAttribute(lambda u: f"{u.username}@example.com")
    password = factory.PostGenerationMethodCall("set_password", "pw-for-tests-1")

    @factory.post_generation
    def platform_admin(user, create, extracted, **kwargs):
        if create and extracted:
            user.groups.add(Group.objects.get_or_create(name=PLATFORM_ADMINS_GROUP)[0])
        if create:
            user.save()


class ClusterFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Cluster

    name = factory.Sequence(lambda n: f"cluster{n}")
    api_server_url = "http://127.0.0.1:1"
    token = "t"


class DepartmentFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Department

    name = factory.Sequence(lambda n: f"dept{n}")


class ProjectFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Project

    name = factory.Sequence(lambda n: f"project{n}")
    department = factory.SubFactory(DepartmentFactory)
    cluster = factory.SubFactory(ClusterFactory)
    namespace = factory.LazyAttribute(lambda p: Project.namespace_for(p.name))
    gpu_deserved = 4
    gpu_limit = 8


class MembershipFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Membership

    user = factory.SubFactory(UserFactory)
    project = factory.SubFactory(ProjectFactory)
    role = Membership.Role.MEMBER


# --- Kit App Streaming (kit) ---------------------------------------------------------------------------

from kit.models import Application, ApplicationProfile, ApplicationVersion  # noqa: E402


class ApplicationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = Application

    id = factory.Sequence(lambda n: f"kit-app{n}")
    name = factory.LazyAttribute(lambda a: f"{a.id} application")
    description = "A Kit application."
    tags = factory.LazyFunction(lambda: ["kit"])


class ApplicationVersionFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = ApplicationVersion

    application = factory.SubFactory(ApplicationFactory)
    version = factory.Sequence(lambda n: f"1.0.{n}")
    container = factory.LazyAttribute(lambda v: f"nvcr.io/nvidia/omniverse/{v.application.id}")
    container_version = factory.LazyAttribute(lambda v: v.version)


class ApplicationProfileFactory(factory.django.DjangoModelFactory):
    """Serves every application and version (`*`), owned by no project and shared with none unless told."""

    class Meta:
        model = ApplicationProfile
        skip_postgeneration_save = True

    slug = factory.Sequence(lambda n: f"profile{n}")
    name = factory.LazyAttribute(lambda p: f"{p.slug} profile")
    description = "An application profile."
    supported_applications = factory.LazyFunction(lambda: [{"name": "*", "versions": ["*"]}])
    ports = factory.LazyFunction(lambda: [{"name": "signaling", "port": 49100}, {"name": "media", "port": 47998}])

    @factory.post_generation
    def shared_with(profile, create, extracted, **kwargs):
        if create and extracted:
            profile.shared_with.set(extracted)


# --- Service profiles and environment templates (profiles) ----------------------------------------------

from profiles.models import EnvironmentTemplate, ServiceProfile, TemplateVersion  # noqa: E402


class EnvironmentTemplateFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = EnvironmentTemplate

    name = factory.Sequence(lambda n: f"template{n}")


class TemplateVersionFactory(factory.django.DjangoModelFactory):
    """An active training version with two variables; rows made here skip the save-time checks."""

    class Meta:
        model = TemplateVersion

    template = factory.SubFactory(EnvironmentTemplateFactory)
    version = "1.0.0"
    kind = "training"
    spec_template = factory.LazyFunction(
        lambda: {"image": "{{ image }}", "compute": {"gpuDevicesRequest": "{{ gpus }}"}})
    variables = factory.LazyFunction(lambda: [
        {"name": "image", "type": "string", "required": False, "default": "python:3.11", "description": "",
         "min": None, "max": None, "pattern": None, "options": None},
        {"name": "gpus", "type": "integer", "required": False, "default": 0, "description": "",
         "min": 0, "max": 4, "pattern": None, "options": None},
    ])
    outputs = factory.LazyFunction(list)
    state = TemplateVersion.State.ACTIVE


class ServiceProfileFactory(factory.django.DjangoModelFactory):
    """A profile with the default setting for each variable; `shared_with=[projects]` for mode selected."""

    class Meta:
        model = ServiceProfile
        skip_postgeneration_save = True

    name = factory.Sequence(lambda n: f"service{n}")
    display_name = factory.LazyAttribute(lambda p: p.name.title())
    template_version = factory.SubFactory(TemplateVersionFactory)
    service_type = ServiceProfile.ServiceType.JOBS
    inputs = factory.LazyAttribute(lambda p: [
        {"name": v["name"], "default": None, "override": "allowed", "allowedValues": None, "required": False,
         "visible": True} for v in p.template_version.variables])

    @factory.post_generation
    def shared_with(profile, create, extracted, **kwargs):
        if create and extracted:
            profile.shared_with.set(extracted)
