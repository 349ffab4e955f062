"""Finding 4 of the security review: credential checks are throttled per client and per account, with a 429,
Retry-After and the error body; an unknown client id costs the same hash as a known one."""

import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.hashers import MD5PasswordHasher
from rest_framework.test import APIClient

from studio.iam.tokens import issue_tokens
from studio.models import AccessKey
from tests.factories import UserFactory

ROOT = Path(__file__).resolve().parents[2]
PER_ACCOUNT, PER_CLIENT = 10, 30  # the default rates, per minute


def token(api, body, address="10.0.0.1"):
    return api.post("/api/v1/token", body, format="json", REMOTE_ADDR=address)


@pytest.mark.django_db
def test_wrong_passwords_for_one_account_from_many_addresses_get_a_429_with_retry_after():
    UserFactory(username="victim")
    api = APIClient()
    answers = [token(api, {"grantType": "password", "username": "victim", "password": f"guess{i}"},
                     address=f"10.0.{i}.1").status_code for i in range(PER_ACCOUNT + 3)]
    assert answers[:PER_ACCOUNT] == [401] * PER_ACCOUNT and set(answers[PER_ACCOUNT:]) == {429}, answers
    refused = token(api, {"grantType": "password", "username": "VICTIM", "password": "pw-for-tests-1"},
                    address="10.9.9.9")
    assert refused.status_code == 429  # even the right password waits: nothing is checked while throttled
    assert int(refused["Retry-After"]) > 0
    assert refused.json()["code"] == 429 and refused.json()["message"]


@pytest.mark.django_db
def test_one_address_trying_many_accounts_gets_a_429():
    api = APIClient()
    answers = [token(api, {"grantType": "password", "username": f"user{i}", "password": "x"}).status_code
               for i in range(PER_CLIENT + 2)]
    assert answers[:PER_CLIENT] == [401] * PER_CLIENT and answers[-1] == 429, answers
    other_address = token(api, {"grantType": "password", "username": "someone", "password": "x"}, address="10.7.7.7")
    assert other_address.status_code == 401


@pytest.mark.django_db
def test_client_credentials_are_throttled_per_client_id():
    key, _ = AccessKey.issue(user=UserFactory(username="robot"), name="ci")
    api = APIClient()
    answers = [token(api, {"grantType": "client_credentials", "clientId": key.client_id, "clientSecret": "no"},
                     address=f"10.1.{i}.1").status_code for i in range(PER_ACCOUNT + 1)]
    assert answers[-1] == 429 and answers[0] == 401, answers


@pytest.mark.django_db
def test_the_login_page_is_throttled_and_says_so(client):
    UserFactory(username="victim")
    for i in range(PER_ACCOUNT):
        assert client.post("/login", {"username": "victim", "password": f"guess{i}"}).status_code == 200
    response = client.post("/login", {"username": "victim", "password": "pw-for-tests-1"})
    assert response.status_code == 429 and int(response["Retry-After"]) > 0
    assert "Too many login attempts" in response.content.decode()
    assert "_auth_user_id" not in client.session


class CountingHasher(MD5PasswordHasher):
    algorithm = "counting_md5"
    calls = 0

    def encode(self, password, salt):
        type(self).calls += 1
        return super().encode(password, salt)


@pytest.mark.django_db
def test_an_unknown_client_id_or_username_costs_the_same_hash_as_a_known_one(settings):
    settings.PASSWORD_HASHERS = ["tests.security.test_throttling.CountingHasher"]
    user = UserFactory(username="known")
    key, _ = AccessKey.issue(user=user, name="k")
    api = APIClient()

    def hashes(body) -> int:
        CountingHasher.calls = 0
        assert token(api, body).status_code == 401
        return CountingHasher.calls

    known = hashes({"grantType": "client_credentials", "clientId": key.client_id, "clientSecret": "wrong"})
    unknown = hashes({"grantType": "client_credentials", "clientId": "ak-nobody", "clientSecret": "wrong"})
    assert known == unknown == 1
    assert hashes({"grantType": "password", "username": "known", "password": "wrong"}) == \
        hashes({"grantType": "password", "username": "nobody", "password": "wrong"}) >= 1


@pytest.mark.parametrize(("redis_url", "backend"), [
    ("redis://127.0.0.1:6379/5", "django.core.cache.backends.redis.RedisCache"),
    ("", "django.core.cache.backends.filebased.FileBasedCache"),  # shared by make run's processes
])
def test_the_counters_live_in_a_cache_every_process_shares(redis_url, backend):
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "REDIS_URL": redis_url}
    script = "import django;django.setup();from django.conf import settings;print(settings.CACHES['default']['BACKEND'])"
    result = subprocess.run([sys.executable, "-c", script], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=60, check=True)
    assert result.stdout.strip() == backend


# --- security round 4, finding 6: the count is kept on the identity the grant checks -----------------------------

@pytest.mark.django_db
@pytest.mark.parametrize("path,grant", [
    ("/api/v1/token", {"grantType": "client_credentials", "clientId": "{id}", "clientSecret": "no"}),
    ("/api/v1/token", {"grantType": "app_token", "AppId": "{id}", "AppSecret": "no"}),
    ("/api/v2/token", {"grant_type": "client_credentials", "client_id": "{id}", "client_secret": "no"}),
])
def test_a_decoy_username_beside_a_client_id_does_not_escape_the_clients_count(path, grant):
    key, _ = AccessKey.issue(user=UserFactory(username="robot"), name="ci")
    api = APIClient()
    answers = []
    for i in range(PER_ACCOUNT + 2):  # each guess from its own address, with a fresh decoy name
        body = {name: value.format(id=key.client_id) for name, value in grant.items()}
        body["username"] = f"decoy{i}"
        answers.append(api.post(path, body, format="json", REMOTE_ADDR=f"10.2.{i}.1").status_code)
    assert answers[:PER_ACCOUNT] == [401] * PER_ACCOUNT and set(answers[PER_ACCOUNT:]) == {429}, answers


@pytest.mark.django_db
def test_a_password_guess_is_counted_on_its_username_whatever_client_id_rides_along():
    UserFactory(username="victim")
    api = APIClient()
    answers = [token(api, {"grantType": "password", "username": "victim", "password": f"guess{i}",
                           "clientId": f"decoy{i}"}, address=f"10.3.{i}.1").status_code for i in range(PER_ACCOUNT + 1)]
    assert answers[-1] == 429 and answers[0] != 429, answers


@pytest.mark.django_db
@pytest.mark.parametrize("path,field,grant_field", [("/api/v1/token", "refreshToken", "grantType"),
                                                     ("/api/v2/token", "refresh_token", "grant_type")])
def test_refresh_grants_are_counted_on_the_refresh_tokens_user(path, field, grant_field):
    user = UserFactory(username="refresher")
    refresh = [issue_tokens(user=user)["refreshToken"] for _ in range(PER_ACCOUNT + 1)]
    api = APIClient()
    # Each refresh token is its own string, each request comes from its own address with a decoy username:
    # only the tokens' user is common to them.
    answers = [api.post(path, {grant_field: "refresh_token", field: raw, "username": f"decoy{i}"}, format="json",
                        REMOTE_ADDR=f"10.5.{i}.1").status_code for i, raw in enumerate(refresh)]
    assert answers[:PER_ACCOUNT] == [200] * PER_ACCOUNT and answers[-1] == 429, answers
