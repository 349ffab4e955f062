import pytest
from django.db import transaction
from django.test import override_settings

from tests.api.world import make_world
from tests.conftest import make_org


@pytest.fixture
def world(org):
    return make_world(org)


@pytest.fixture(scope="module")
def world_of_the_module(django_db_setup, django_db_blocker):
    """One world for every test of a module, in a transaction rolled back after the module; each test runs in a
    savepoint inside it (the `db` fixture), so every test finds the world as it was. make_world writes ~270 rows
    (0.7 s): built once, it saves ~13 min of the ~1100 tests of the fuzzing and the authorization matrix. Only
    for modules whose tests all use `db`, never `transaction=True` (which would flush it)."""
    with django_db_blocker.unblock(), override_settings(
            PASSWORD_HASHERS=["django.contrib.auth.hashers.MD5PasswordHasher"]), transaction.atomic():
        yield make_world(make_org())
        transaction.set_rollback(True)
