import pytest

from studio.models import AccessKey
from tests.cli.support import Cli


@pytest.fixture
def cli(tmp_path):
    return Cli(home=tmp_path)


@pytest.fixture
def logged_in(live_server, tmp_path):
    """`studio login` of `user` with a fresh access key, each user with a config file of its own."""

    def login(user) -> Cli:
        runner = Cli(home=tmp_path / user.username)
        runner.home.mkdir()
        key, secret = AccessKey.issue(user=user, name="cli")
        result = runner("login", "--url", live_server.url, "--client-id", key.client_id,
                        env={"STUDIO_CLIENT_SECRET": secret})
        assert result.code == 0, result
        return runner

    return login
