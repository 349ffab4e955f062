import pytest

from tests.api.world import make_world


@pytest.fixture
def world(org):
    return make_world(org)
