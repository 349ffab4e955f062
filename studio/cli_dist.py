"""The researchers' CLI (`cli/`, its own package) as a wheel the server hands out, built from the checkout on
first request: a pure-Python wheel (`py3-none-any`), so one file serves every operating system and architecture.

Built here with the standard library rather than by pip or a build backend at request time: the wheel format is a
zip with a `.dist-info` folder (PEP 427, PEP 376's RECORD), and its metadata comes from `cli/pyproject.toml`, the
same file `pip install ./cli` reads. The bytes are reproducible (fixed zip dates, sorted entries) and kept per
process until a source file changes."""

from __future__ import annotations

import base64
import hashlib
import io
import re
import tomllib
import zipfile
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from django.conf import settings

ZIP_DATE = (1980, 1, 1, 0, 0, 0)


@dataclass(frozen=True)
class Wheel:
    filename: str
    content: bytes
    version: str
    sha256: str


def source_dir() -> Path:
    return Path(settings.BASE_DIR) / "cli"


def _fingerprint(root: Path) -> tuple:
    files = [root / "pyproject.toml", *sorted((root / "paas_cli").rglob("*.py"))]
    return tuple((str(f.relative_to(root)), f.stat().st_mtime_ns, f.stat().st_size) for f in files
                 if "__pycache__" not in f.parts)


def wheel() -> Wheel:
    root = source_dir()
    return _build(str(root), _fingerprint(root))


def _record_hash(data: bytes) -> str:
    return "sha256=" + base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()


@lru_cache(maxsize=2)
def _build(root: str, fingerprint: tuple) -> Wheel:
    base = Path(root)
    project = tomllib.loads((base / "pyproject.toml").read_text())["project"]
    name, version = project["name"], project["version"]
    stem = re.sub(r"[-_.]+", "_", name).lower()
    dist_info = f"{stem}-{version}.dist-info"
    entries: list[tuple[str, bytes]] = []
    for relative, _mtime, _size in fingerprint:
        if relative.endswith(".py"):
            entries.append((relative, (base / relative).read_bytes()))
    metadata = ["Metadata-Version: 2.1", f"Name: {name}", f"Version: {version}",
                f"Summary: {project.get('description', '')}"]
    if project.get("requires-python"):
        metadata.append(f"Requires-Python: {project['requires-python']}")
    metadata += [f"Requires-Dist: {requirement}" for requirement in project.get("dependencies", [])]
    scripts = "".join(f"{script} = {target}\n" for script, target in project.get("scripts", {}).items())
    entries += [
        (f"{dist_info}/METADATA", ("\n".join(metadata) + "\n").encode()),
        (f"{dist_info}/WHEEL", b"Wheel-Version: 1.0\nGenerator: paas-studio\nRoot-Is-Purelib: true\n"
                               b"Tag: py3-none-any\n"),
        (f"{dist_info}/entry_points.txt", f"[console_scripts]\n{scripts}".encode()),
    ]
    record = "".join(f"{path},{_record_hash(data)},{len(data)}\n" for path, data in entries)
    entries.append((f"{dist_info}/RECORD", (record + f"{dist_info}/RECORD,,\n").encode()))
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        for path, data in entries:
            info = zipfile.ZipInfo(path, date_time=ZIP_DATE)
            info.external_attr = 0o644 << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            archive.writestr(info, data)
    content = buffer.getvalue()
    return Wheel(filename=f"{stem}-{version}-py3-none-any.whl", content=content, version=version,
                 sha256=hashlib.sha256(content).hexdigest())
