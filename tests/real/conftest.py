"""Tests against the real cluster (`make e2e-real`): a current kube-apiserver with KAI Scheduler, KWOK and the
training operator. The session's cluster is the `real_apiserver` fixture of tests/conftest.py, with kubesim's node
side beside KWOK by `real_cluster` (there
too, so that tests elsewhere can parametrize over kubesim and the real server); every test in this folder is
marked `real`."""

import pytest

from tests.conftest import real_official_client


def pytest_collection_modifyitems(config, items):
    for item in items:
        if "/tests/real/" in str(item.path):
            item.add_marker(pytest.mark.real)


@pytest.fixture
def real_admin(real_apiserver):
    api = real_official_client(real_apiserver)
    yield api
    api.close()
