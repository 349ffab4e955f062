"""The Dex provider of the single sign-on tests (tests/iam/dex_support.py) and its users."""

import pytest

from tests.iam.dex_support import Dex, DexUser, dex_binary


@pytest.fixture(scope="session")
def dex_path():
    return dex_binary()


@pytest.fixture
def start_dex(dex_path):
    """Start a Dex with these users (and the portal's redirect URIs); stopped after the test."""
    started = []

    def start(users: list[DexUser], redirect_uris=()) -> Dex:
        started.append(Dex(dex_path, redirect_uris=list(redirect_uris), users=users).start())
        return started[-1]

    yield start
    for dex in started:
        dex.stop()


ADA = DexUser(email="ada@example.com", password="ada-password-1", username="ada", user_id="u-ada",
              groups=["team-a", "readers"])
BEN = DexUser(email="ben@example.com", password="ben-password-1", username="ben", user_id="u-ben", groups=["team-b"])
