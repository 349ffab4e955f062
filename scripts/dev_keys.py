"""The keys of a development checkout: `make` writes them once to var/secrets.env (mode 0600) and every
later target reuses them, so tokens and encrypted cluster credentials survive a restart of `make run`.

The file is sourced by the Makefile's shell (`set -a; . var/secrets.env`); a key already set in the
environment wins. Standard library only: it runs before anything else is installed."""

import base64
import os
import secrets
import sys
from pathlib import Path


def write_keys(path: Path) -> bool:
    """Create `path` with fresh random keys unless it exists; True when created."""
    if path.exists():
        return False
    path.parent.mkdir(parents=True, exist_ok=True)
    secret_key = secrets.token_urlsafe(50)
    fernet_key = base64.urlsafe_b64encode(secrets.token_bytes(32)).decode()  # what Fernet.generate_key() makes
    text = (
        "# Development keys of this checkout, made by scripts/dev_keys.py; never use them in production.\n"
        f"SECRET_KEY=${{SECRET_KEY:-{secret_key}}}\n"
        f"FIELD_ENCRYPTION_KEY=${{FIELD_ENCRYPTION_KEY:-{fernet_key}}}\n"
    )
    # O_EXCL: two makes started at once cannot both write; 0600: the keys are readable by their owner only.
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    with os.fdopen(fd, "w") as handle:
        handle.write(text)
    return True


if __name__ == "__main__":
    target = Path(sys.argv[1] if len(sys.argv) > 1 else "var/secrets.env")
    if write_keys(target):
        print(f"Made development keys in {target}")
