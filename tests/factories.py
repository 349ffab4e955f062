"""factory_boy factories for the rows tests need; every app's tests import from here."""

import factory
from django.contrib.auth import get_user_model

from studio.models import (
    DEFAULT_ROLE_OF_LEVEL,
    PLATFORM_ADMIN_ROLE,
    AccessRule,
    Cluster,
    Department,
    Level,
    Project,
    Role,
)


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
            # A platform admin holds an admin-level role at tenant scope.
            AccessRule.objects.create(subject_type=AccessRule.Subject.USER, subject_id=user.username, user=user,
                                      role=Role.objects.get(name=PLATFORM_ADMIN_ROLE),
                                      scope_type=AccessRule.Scope.TENANT, scope_id=str(AccessRule.TENANT_ID))
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


class AccessRuleFactory(factory.django.DjangoModelFactory):
    """A user's access rule; `role` is a Run:ai role name, the scope a project, department or the tenant."""

    class Meta:
        model = AccessRule

    user = factory.SubFactory(UserFactory)
    subject_type = AccessRule.Subject.USER
    subject_id = factory.LazyAttribute(lambda r: r.user.username)
    role = factory.LazyFunction(lambda: Role.objects.get(name="L1 researcher"))
    scope_type = AccessRule.Scope.PROJECT
    project = factory.SubFactory(ProjectFactory)
    department = None
    scope_id = factory.LazyAttribute(
        lambda r: str(r.project.pk) if r.project else str(r.department.pk) if r.department else "1"
    )


class MembershipFactory(AccessRuleFactory):
    """A project member of a level (`role="member"`): a project-scope rule of the level's default role."""

    @classmethod
    def _create(cls, model_class, *args, role=Level.MEMBER, **kwargs):
        if isinstance(role, str):
            role = Role.objects.get(name=DEFAULT_ROLE_OF_LEVEL[role])
        return super()._create(model_class, *args, role=role, **kwargs)


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


def allow_host_paths(project):
    """A project policy (every type) that lets the project mount hostPath volumes, as seed 003's example does:
    the secure tenant default refuses them (policies.fallback)."""
    from policies.models import Policy

    for policy_type in ("trainings", "workspaces", "inferences"):
        Policy.objects.update_or_create(
            policy_type=policy_type, scope_key=Policy.key_for("project", project_id=project.pk),
            defaults={"scope": "project", "project": project, "name": f"{project.name}-host-paths",
                      "rules": {"storage": {"hostPath": {"instances": {"canAdd": True}}}}})


def seed_node_pools(cluster):
    """The node pools the seeds' bodies name (my-node-pool-a, my-node-pool-b) and `default`, on `cluster`, as
    make run's demo cluster has them: a submission naming a pool its cluster lacks is a 400."""
    from studio.models import NodePool

    for name in ("default", "my-node-pool-a", "my-node-pool-b"):
        label = {} if name == "default" else {"label_key": "run.ai/node-pool", "label_value": name}
        NodePool.objects.get_or_create(cluster=cluster, name=name, defaults={"is_default": name == "default", **label})


SEED_DATA_VOLUME = "123e4567-e89b-12d3-a456-426614174000"


def seed_data_volume(project):
    """The data volume the seeds' bodies mount (`storage.dataVolume`), made the project's own (not yet Ready): a
    submission mounting one its project may not use is a 400."""
    from assets.models import DataVolume

    DataVolume.objects.get_or_create(pk=SEED_DATA_VOLUME, defaults={
        "name": "seed-data", "project": project, "cluster": project.cluster, "origin_pvc_name": "seed-data",
        "created_by": "seed", "updated_by": "seed"})  # Creating: a push makes no claim for it, as before it existed


def usage_history(project, *, hours: int = 24 * 7, gpus: float = 2.0, busy: float = 0.5, now=None,
                  node_pool: str = "default", user_name: str = "bob@example.com"):
    """Rolled-up usage of `project`, as the roll-up writes it: an hourly row for each of the last `hours` closed
    hours (`gpus` held the whole hour, every GPU-hour measured, `busy` of it used; nothing every sixth hour, so a
    trend has shape), their sums per unit and the daily rows summed from them. Returns the hourly rows."""
    import uuid
    from datetime import timedelta

    from django.utils import timezone

    from usage.models import UsageDay, UsageHour, UsageUnitHour
    from usage.rollup import unit_rows

    now = now or timezone.now()
    end = now.replace(minute=0, second=0, microsecond=0)
    workload = uuid.uuid4()
    rows = []
    for n in range(1, hours + 1):
        if n % 6 == 0:
            continue
        held = gpus * (1.0 if n % 2 else 0.5)
        rows.append(UsageHour(
            hour=end - timedelta(hours=n), workload_id=workload, workload_name="trainer", cluster_id=project.cluster_id,
            node_pool=node_pool, project_id=project.pk, project_name=project.name,
            department_id=project.department_id, department_name=project.department.name, user_name=user_name,
            gpu_hours=held, gpu_measured_hours=held, gpu_used_hours=held * busy, cpu_core_hours=4.0,
            memory_gib_hours=8.0))
    UsageHour.objects.bulk_create(rows)
    UsageUnitHour.objects.bulk_create([unit for row in rows for unit in unit_rows(row.hour, [row])])
    days: dict = {}
    for row in rows:
        day = days.setdefault(row.hour.date(), dict.fromkeys(
            ("gpu_hours", "gpu_measured_hours", "gpu_used_hours", "cpu_core_hours", "memory_gib_hours"), 0.0))
        for key in day:
            day[key] += getattr(row, key)
    UsageDay.objects.bulk_create([UsageDay(
        day=day, cluster_id=project.cluster_id, node_pool=node_pool, project_id=project.pk, project_name=project.name,
        department_id=project.department_id, department_name=project.department.name, user_name=user_name,
        **amounts) for day, amounts in days.items()])
    return rows


class NotificationFactory(factory.django.DjangoModelFactory):
    class Meta:
        model = "notifications.Notification"

    user = factory.SubFactory(UserFactory)
    key = factory.Sequence(lambda n: f"event-{n}")
    category = "Workload status change"
    type = "Failed"
    title = factory.Sequence(lambda n: f"Workload train-{n} failed")
    message = "Its pod exited with code 1."
