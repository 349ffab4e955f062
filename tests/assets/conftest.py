import pytest

from tests.assets.bodies import body


@pytest.fixture
def make_asset(client_for, org):
    """Create an asset through the API as `user` (alpha's admin unless given); the answer's JSON."""
    def make(path, name, *, user=None, **kwargs):
        kwargs.setdefault("project", org.a)
        if path == "datasource/secrets" and "credential_id" not in kwargs:
            kwargs["credential_id"] = make("credentials/password", f"{name}-cred", user=user,
                                           scope=kwargs.get("scope", "project"), project=kwargs["project"])["meta"]["id"]
        response = client_for(user or org.users.admin).post(f"/api/v1/asset/{path}", body(path, name, **kwargs),
                                                            format="json")
        assert response.status_code == 202, response.json()
        return response.json()

    return make
