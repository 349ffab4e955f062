"""A registry credential on the real cluster (`make e2e-real`): its Secret of type kubernetes.io/dockerconfigjson
made in the project's namespace by the product's own service account (deploy/rbac.yaml's rights, nothing more),
the pods of a training pulling with it (`imagePullSecrets`), and the Secret removed with the credential — the
scenario tests/assets/test_credential_secrets.py runs on kubesim."""

import pytest

from tests.assets.secrets_support import registry_credential_reaches_the_pods

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_registry_credential_makes_the_pods_image_pull_secret_on_the_real_cluster(worker, real_org):
    registry_credential_reaches_the_pods(real_org)
