"""`make run`'s set-up: one demo admin password, ever, shown by the banner while it still works."""

import io
import logging
import stat

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command

from studio.logs import PeriodicChatter


@pytest.fixture
def var_dir(settings, tmp_path, monkeypatch):
    monkeypatch.delenv("DEMO_ADMIN_PASSWORD", raising=False)
    settings.VAR_DIR = tmp_path
    return tmp_path


def run(command: str) -> str:
    out = io.StringIO()
    call_command(command, stdout=out, **({"kubesim_url": "http://127.0.0.1:6443"} if command == "demo_setup" else {}))
    return out.getvalue()


def test_set_up_makes_one_password_and_keeps_it(db, var_dir):
    first = run("demo_setup")
    kept = var_dir / "demo-admin-password"
    password = kept.read_text().strip()
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert password not in first  # the banner shows it, not the set-up's output
    admin = get_user_model().objects.get(username="admin")
    assert admin.check_password(password) and admin.is_superuser

    run("demo_setup")
    assert get_user_model().objects.filter(username="admin").count() == 1
    assert kept.read_text().strip() == password

    get_user_model().objects.filter(username="admin").delete()  # a new database, the same var/
    run("demo_setup")
    assert get_user_model().objects.get(username="admin").check_password(password)


def test_login_line_shows_the_password_until_it_is_changed(db, var_dir):
    run("demo_setup")
    password = (var_dir / "demo-admin-password").read_text().strip()
    assert run("demo_login").strip() == f"admin / {password}"

    admin = get_user_model().objects.get(username="admin")
    admin.set_password("changed-by-the-user")
    admin.save()
    line = run("demo_login")
    assert password not in line and "changed-by-the-user" not in line
    assert "manage.py changepassword admin" in line


def test_login_line_with_demo_admin_password(db, var_dir, monkeypatch):
    monkeypatch.setenv("DEMO_ADMIN_PASSWORD", "from-the-environment")
    run("demo_setup")
    assert not (var_dir / "demo-admin-password").exists()
    assert run("demo_login").strip() == "admin / from-the-environment"


def record(logger: str, message: str, level=logging.INFO) -> logging.LogRecord:
    return logging.LogRecord(logger, level, __file__, 1, message, None, None)


@pytest.mark.parametrize("logger, message", [
    ("celery.beat", "Scheduler: Sending due task clusters-sync (workloads.tasks.clusters_sync)"),
    ("celery.worker.strategy", "Task workloads.tasks.cluster_sync[1c2d] received"),
    ("celery.app.trace", "Task workloads.tasks.cluster_collect_metrics[1c2d] succeeded in 0.01s: None"),
])
def test_periodic_chatter_is_debug(logger, message):
    assert PeriodicChatter(keep=False).filter(record(logger, message)) is False
    kept = record(logger, message)
    assert PeriodicChatter(keep=True).filter(kept) is True and kept.levelname == "DEBUG"


@pytest.mark.parametrize("logger, message, level", [
    ("celery.worker.strategy", "Task workloads.tasks.workload_push[1c2d] received", logging.INFO),
    ("celery.app.trace", "Task workloads.tasks.cluster_sync[1c2d] raised unexpected: OperationalError()",
     logging.ERROR),
    ("studio.sync", "workloads.tasks.cluster_sync phase changed", logging.INFO),
])
def test_what_a_user_caused_and_errors_stay(logger, message, level):
    kept = record(logger, message, level)
    assert PeriodicChatter(keep=False).filter(kept) is True and kept.levelno == level
