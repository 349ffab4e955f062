"""Finding 1 of the security review: no known default keys. With DEBUG off, the web, worker and watcher
processes refuse to start without SECRET_KEY and FIELD_ENCRYPTION_KEY, and `check --deploy` names each missing
key; `make run` makes random keys of its own once and keeps them."""

import os
import stat
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]
PRODUCTION = {"DEBUG": "false", "HTTPS": "true", "ALLOWED_HOSTS": "studio.example.com",
              "DJANGO_SETTINGS_MODULE": "config.settings"}


def run(command: list[str], **env) -> subprocess.CompletedProcess:
    base = {k: v for k, v in os.environ.items()
            if k not in ("SECRET_KEY", "FIELD_ENCRYPTION_KEY", "DJANGO_ALLOW_ASYNC_UNSAFE")}
    return subprocess.run(command, cwd=ROOT, env={**base, **PRODUCTION, **env}, capture_output=True, text=True,
                          timeout=120)


def test_check_deploy_without_keys_reports_an_error_for_each():
    result = run([sys.executable, "manage.py", "check", "--deploy"])
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    assert "studio.E001" in output and "SECRET_KEY" in output, output
    assert "studio.E002" in output and "FIELD_ENCRYPTION_KEY" in output, output


def test_check_deploy_refuses_a_field_encryption_key_that_is_not_a_fernet_key():
    result = run([sys.executable, "manage.py", "check", "--deploy"], SECRET_KEY="s" * 20 + "x7Q!k" * 10,
                 FIELD_ENCRYPTION_KEY="not-a-fernet-key")
    assert result.returncode != 0 and "studio.E003" in result.stdout + result.stderr


def test_the_web_application_refuses_to_start_without_keys():
    result = run([sys.executable, "-c", "import config.wsgi"], SECRET_KEY="s" * 20 + "x7Q!k" * 10)
    assert result.returncode != 0
    assert "FIELD_ENCRYPTION_KEY" in result.stderr and "ImproperlyConfigured" in result.stderr, result.stderr


def test_the_celery_worker_refuses_to_start_without_keys():
    result = run([sys.executable, "-m", "celery", "-A", "config", "worker", "--pool", "solo", "-l", "WARNING"],
                 FIELD_ENCRYPTION_KEY=Fernet.generate_key().decode())
    assert result.returncode != 0
    assert "SECRET_KEY" in result.stderr and "ImproperlyConfigured" in result.stderr, result.stderr


def test_the_cluster_watcher_refuses_to_start_without_keys():
    # It opens the clusters' sealed tokens; before, it started and ran without them.
    result = run([sys.executable, "manage.py", "cluster_watch"], SECRET_KEY="s" * 20 + "x7Q!k" * 10)
    assert result.returncode != 0
    assert "FIELD_ENCRYPTION_KEY" in result.stderr and "ImproperlyConfigured" in result.stderr, result.stderr


def test_runserver_refuses_to_start_without_keys(tmp_path):
    # Its own SQLite file: runserver looks at migrations before it loads the application that refuses.
    result = run([sys.executable, "manage.py", "runserver", "127.0.0.1:8119", "--noreload", "--skip-checks"],
                 DATABASE_URL=f"sqlite:///{tmp_path}/db.sqlite3")
    assert result.returncode != 0 and "SECRET_KEY is not set" in result.stderr, result.stderr


def test_make_run_keeps_random_keys_of_its_own_under_var(tmp_path):
    """`scripts/dev_keys.py` (the Makefile's recipe for var/secrets.env) writes them once, mode 0600, and a
    second run keeps them; the Makefile's targets read them, and then `check --deploy` is clean."""
    keys = tmp_path / "secrets.env"
    assert subprocess.run([sys.executable, "scripts/dev_keys.py", str(keys)], cwd=ROOT, check=True).returncode == 0
    first = keys.read_text()
    assert stat.S_IMODE(keys.stat().st_mode) == 0o600
    subprocess.run([sys.executable, "scripts/dev_keys.py", str(keys)], cwd=ROOT, check=True)
    assert keys.read_text() == first
    other = tmp_path / "other.env"
    subprocess.run([sys.executable, "scripts/dev_keys.py", str(other)], cwd=ROOT, check=True)
    assert other.read_text() != first  # random, not a known key

    shell = f"set -a && . {keys} && set +a && exec {sys.executable} manage.py check --deploy --fail-level WARNING"
    result = run(["sh", "-c", shell])
    assert result.returncode == 0, result.stdout + result.stderr
    env = run(["sh", "-c", f"set -a && . {keys} && set +a && env"]).stdout
    fernet_key = next(line.split("=", 1)[1] for line in env.splitlines() if line.startswith("FIELD_ENCRYPTION_KEY="))
    Fernet(fernet_key.encode())  # a valid key
    # A key set in the environment wins over the kept one.
    env = run(["sh", "-c", f"set -a && . {keys} && set +a && env"], SECRET_KEY="mine").stdout
    assert "SECRET_KEY=mine" in env.splitlines()


def test_a_demo_database_sealed_with_another_key_is_repaired_by_the_set_up(db, settings, tmp_path, monkeypatch):
    """A checkout whose demo data predates var/secrets.env: `make run` seals the demo cluster's token again
    instead of failing on credentials it cannot read."""
    import io

    from django.core.management import call_command

    from studio.models import Cluster

    monkeypatch.delenv("DEMO_ADMIN_PASSWORD", raising=False)
    settings.VAR_DIR = tmp_path
    call_command("demo_setup", kubesim_url="http://127.0.0.1:6443", stdout=io.StringIO())
    settings.FIELD_ENCRYPTION_KEY = Fernet.generate_key().decode()  # the keys changed under the data
    call_command("demo_setup", kubesim_url="http://127.0.0.1:6443", stdout=io.StringIO())
    assert Cluster.objects.get(name="demo").token == "kubesim-token"
