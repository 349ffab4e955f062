"""The SQLite database holds password hashes, tokens' blacklist and encrypted cluster credentials: it is made and
kept owner-only (0600), as the keys beside it under var/ are (security round 3, S19) — by `manage.py migrate`, the
first command of `make run`, whatever the umask, and an older world-readable file is tightened when it is opened."""

import os
import stat
import subprocess
import sys
from pathlib import Path

from cryptography.fernet import Fernet

ROOT = Path(__file__).resolve().parents[2]


def manage(var: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "DJANGO_SETTINGS_MODULE")}
    env.update(STUDIO_VAR_DIR=str(var), DEBUG="true", SECRET_KEY="k" * 50,
               FIELD_ENCRYPTION_KEY=Fernet.generate_key().decode())
    result = subprocess.run([sys.executable, "manage.py", *args], cwd=ROOT, env=env, capture_output=True, text=True,
                            timeout=300, preexec_fn=lambda: os.umask(0o022))
    assert result.returncode == 0, result.stderr[-2000:]
    return result


def mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_a_new_database_is_made_owner_only(tmp_path):
    manage(tmp_path, "migrate", "--noinput", "-v", "0")
    database = tmp_path / "studio.sqlite3"
    assert database.stat().st_size > 0
    assert mode(database) == 0o600, oct(mode(database))
    assert not [p for p in tmp_path.glob("studio.sqlite3*") if mode(p) & 0o077]


def test_a_world_readable_database_of_before_is_tightened_when_opened(tmp_path):
    database = tmp_path / "studio.sqlite3"
    manage(tmp_path, "migrate", "--noinput", "-v", "0")
    database.chmod(0o644)
    manage(tmp_path, "check")
    assert mode(database) == 0o600, oct(mode(database))
