"""The settings of the test run: the production settings (DEBUG off), with random keys made for this run
unless the environment brings its own, and loopback clusters allowed. They are put in the environment, so that the processes the tests
start (a Celery worker, `manage.py`) share them."""

import os
import secrets
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from cryptography.fernet import Fernet

os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
os.environ.setdefault("FIELD_ENCRYPTION_KEY", Fernet.generate_key().decode())
# The simulated clusters of the tests listen on 127.0.0.1.
os.environ.setdefault("CLUSTER_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16")
# Slack's Web API: nothing listens on port 9 of loopback (a test that needs it points it at its own receiver).
os.environ.setdefault("NOTIFICATIONS_SLACK_API_URL", "http://127.0.0.1:9/api")



def _own_place_per_test_process() -> None:
    """`make test` runs one pytest process per core (pytest-xdist): each gets a var/ folder and a Redis database of
    its own (pytest-django already gives each its own test database, test_<name>_gwN). The processes a test starts
    (a Celery worker, manage.py) read this file again with the environment already moved: STUDIO_TEST_PROCESS
    says the move is made, so that they do not move it a second time."""
    process = os.environ.get("PYTEST_XDIST_WORKER", "")
    if not process.startswith("gw") or os.environ.get("STUDIO_TEST_PROCESS") == process:
        return
    number = int(process[2:])
    var = Path(os.environ.get("STUDIO_VAR_DIR") or Path(__file__).resolve().parent.parent / "var")
    os.environ["STUDIO_VAR_DIR"] = str(var / f"test-{process}")
    redis = urlsplit(os.environ.get("REDIS_URL", ""))
    if redis.scheme:
        database = (int(redis.path.strip("/") or 0) + number) % 16
        os.environ["REDIS_URL"] = urlunsplit(redis._replace(path=f"/{database}"))
    os.environ["STUDIO_TEST_PROCESS"] = process


_own_place_per_test_process()

from config.settings import *  # noqa: E402,F403

MIDDLEWARE = [("tests.static_files.WhiteNoiseFindingOnce" if name == "whitenoise.middleware.WhiteNoiseMiddleware"
               else name) for name in MIDDLEWARE]  # noqa: F405
assert "tests.static_files.WhiteNoiseFindingOnce" in MIDDLEWARE

# Throttling counters per test process (tests/conftest.py empties the cache before each test), never in a
# Redis shared with other test runs.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
