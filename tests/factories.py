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
