import pytest

from tests.notifications.servers import HttpReceiver, SmtpServer


@pytest.fixture
def smtp():
    with SmtpServer() as server:
        yield server


@pytest.fixture
def receiver():
    with HttpReceiver() as server:
        yield server
