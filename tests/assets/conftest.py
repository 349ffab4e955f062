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


# --- real container registries: the CNCF distribution registry (tests/assets/registry_support.py) -------------

REGISTRY_USER = ("puller", "registry-password-for-tests")
PUSHED = {"team/trainer": ("1.0", "1.1", "latest"), "team/notebook": ("2024.06",), "tools/cli": ("v3",)}


@pytest.fixture(scope="session")
def registries():
    """Registries on loopback holding PUSHED: `open` answers anyone, `locked` asks for REGISTRY_USER's login
    (htpasswd), `tokens` for a token of its token server (`token_server`, Docker's Bearer flow), which gives one for
    REGISTRY_USER's login (it serves `open`'s storage); started once for the session, stopped at its end."""
    from types import SimpleNamespace

    from tests.assets.registry_support import Registry, TokenServer, registry_binary

    binary = registry_binary()
    token_server = TokenServer(dict([REGISTRY_USER]))
    open_ = Registry(binary)
    started = SimpleNamespace(open=open_, locked=Registry(binary, users=dict([REGISTRY_USER])),
                              tokens=Registry(binary, token=token_server, data=open_.data), token_server=token_server)
    try:
        for registry in (started.open, started.locked):
            registry.start()
            for repository, tags in PUSHED.items():
                for tag in tags:
                    registry.push(repository, tag)
        started.tokens.start()
        yield started
    finally:
        for registry in (started.open, started.locked, started.tokens):
            registry.stop()
        token_server.stop()
