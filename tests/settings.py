"""The settings of the test run: the production settings (DEBUG off), with random keys made for this run
unless the environment brings its own, and loopback clusters allowed. They are put in the environment, so that the processes the tests
start (a Celery worker, `manage.py`) share them."""

import os
import secrets

from cryptography.fernet import Fernet

os.environ.setdefault("SECRET_KEY", secrets.token_urlsafe(50))
os.environ.setdefault("FIELD_ENCRYPTION_KEY", Fernet.generate_key().decode())
# The simulated clusters of the tests listen on 127.0.0.1.
os.environ.setdefault("CLUSTER_ALLOWED_NETWORKS", "127.0.0.0/8,::1/128,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16")
# Slack's Web API: nothing listens on port 9 of loopback (a test that needs it points it at its own receiver).
os.environ.setdefault("NOTIFICATIONS_SLACK_API_URL", "http://127.0.0.1:9/api")

from config.settings import *  # noqa: E402,F403

# Throttling counters per test process (tests/conftest.py empties the cache before each test), never in a
# Redis shared with other test runs.
CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}
