"""Where the CLI keeps its settings: one JSON file, readable by its owner only, that the environment overrides.

File: $STUDIO_CONFIG, else $XDG_CONFIG_HOME/paas-studio/config.json, else ~/.config/paas-studio/config.json.
Environment: STUDIO_URL (the server), STUDIO_TOKEN (a bearer token: nothing is read from the file for it),
STUDIO_PROJECT (the default project)."""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field
from pathlib import Path

KEYS = ("url", "token", "project", "clientId", "expiresAt")


def config_path() -> Path:
    explicit = os.environ.get("STUDIO_CONFIG")
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "paas-studio" / "config.json"


@dataclass
class Config:
    values: dict = field(default_factory=dict)
    path: Path = field(default_factory=config_path)

    @classmethod
    def load(cls) -> Config:
        path = config_path()
        try:
            values = json.loads(path.read_text())
        except FileNotFoundError:
            values = {}
        except (OSError, ValueError) as exc:
            raise ConfigError(f"cannot read {path}: {exc}") from exc
        if not isinstance(values, dict):
            raise ConfigError(f"{path} is not a JSON object")
        return cls({k: v for k, v in values.items() if k in KEYS}, path)

    def save(self) -> None:
        """Write the file with mode 0600 (its folder 0700): it holds a bearer token."""
        self.path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        temporary = self.path.with_name(self.path.name + ".tmp")
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "w") as out:
            json.dump({k: v for k, v in self.values.items() if v is not None}, out, indent=2, sort_keys=True)
            out.write("\n")
        os.chmod(temporary, 0o600)
        os.replace(temporary, self.path)

    # The effective settings: the environment wins over the file.
    @property
    def url(self) -> str | None:
        url = os.environ.get("STUDIO_URL") or self.values.get("url")
        return url.rstrip("/") if url else None

    @property
    def token(self) -> str | None:
        return os.environ.get("STUDIO_TOKEN") or self.values.get("token")

    @property
    def project(self) -> str | None:
        return os.environ.get("STUDIO_PROJECT") or self.values.get("project")

    def source_of(self, key: str) -> str:
        variable = {"url": "STUDIO_URL", "token": "STUDIO_TOKEN", "project": "STUDIO_PROJECT"}.get(key)
        if variable and os.environ.get(variable):
            return variable
        return "config file" if self.values.get(key) else "unset"


class ConfigError(Exception):
    pass
