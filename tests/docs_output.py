"""Where tests write the screenshots and transcripts that docs/ shows: a folder of the test run's own (pytest's
temporary folder, kept for the last three runs) by default, so a checkout stays clean after `make test`; the
committed files under docs/ when STUDIO_REFRESH_DOCS=1, to refresh them on purpose."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

ENV = "STUDIO_REFRESH_DOCS"
DOCS = Path(__file__).resolve().parents[1] / "docs"
_scratch: Path | None = None


def refreshing() -> bool:
    return os.environ.get(ENV, "").strip().lower() in ("1", "true", "yes")


def use_scratch(path: Path) -> None:
    """The run's own folder (tests/conftest.py gives pytest's tmp_path_factory one)."""
    global _scratch
    _scratch = Path(path)


def folder(*parts: str) -> Path:
    """docs/<parts> when refreshing, else the same place under the run's own folder; made if missing."""
    global _scratch
    if refreshing():
        base = DOCS
    else:
        if _scratch is None:
            _scratch = Path(tempfile.mkdtemp(prefix="paas-studio-docs-"))
        base = _scratch
    path = base.joinpath(*parts)
    path.mkdir(parents=True, exist_ok=True)
    return path
