"""perf.keyed_rows' compile-once queries answer what the ORM answers, whatever the values of each call."""

import uuid

import pytest
from django.contrib.auth.models import Group, User
from django.db.models import Exists, OuterRef

from perf import keyed_rows
from studio.models import AccessKey

pytestmark = pytest.mark.django_db


def _users(user_id: int, name: str, key_id: uuid.UUID | None):
    return User.objects.filter(pk=user_id).annotate(
        named=Exists(Group.objects.filter(name=name, user=OuterRef("pk"))),
        keyed=Exists(AccessKey.objects.filter(pk=key_id, user=OuterRef("pk"))))


def _names(user_id: int, name: str):
    return User.objects.filter(pk=user_id, groups__name=name).values("username", "groups__name")


def test_instances_and_values_match_the_orm_for_each_call():
    alice, bob = User.objects.create(username="alice"), User.objects.create(username="bob")
    alice.groups.add(Group.objects.create(name="ml"))
    key = AccessKey.objects.create(user=bob, name="k", client_id="c1", secret_hash="x")
    calls = [(alice.pk, "ml", None), (alice.pk, "other", key.pk), (bob.pk, "ml", key.pk), (bob.pk, "ml", uuid.uuid4()),
             (10**6, "ml", None)]
    for user_id, name, key_id in calls:
        once = keyed_rows.instances_once_compiled(_users, user_id=user_id, name=name, key_id=key_id)
        orm = list(_users(user_id, name, key_id))
        assert [(u.pk, u.username, u.named, u.keyed) for u in once] == \
            [(u.pk, u.username, u.named, u.keyed) for u in orm]
        assert all(type(u) is User and not u._state.adding for u in once)
        assert keyed_rows.values_once_compiled(_names, user_id=user_id, name=name) == list(_names(user_id, name))
    assert [u.keyed for u in keyed_rows.instances_once_compiled(_users, user_id=bob.pk, name="", key_id=key.pk)] == [True]


def test_a_builder_that_ignores_a_parameter_is_refused():
    def ignores(user_id: int, name: str):
        return User.objects.filter(pk=user_id).values("pk")

    with pytest.raises(ValueError, match="does not use \\['name'\\]"):
        keyed_rows.values_once_compiled(ignores, user_id=1, name="x")
