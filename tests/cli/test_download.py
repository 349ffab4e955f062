"""The CLI from the server, at Run:ai's Researcher Command Line Interface paths: the one-line commands, the
installer scripts, the wheel (the same for every system and architecture Run:ai names) and the manual; the wheel
installs with pip and its `studio` runs. Unknown systems, architectures and documents are JSON 404s."""

import hashlib
import io
import subprocess
import sys
import tomllib
import zipfile
from pathlib import Path

import pytest
import requests

pytestmark = pytest.mark.django_db(transaction=True)
CLI_PROJECT = tomllib.loads((Path(__file__).resolve().parents[2] / "cli" / "pyproject.toml").read_text())["project"]
WHEEL = f"paas_studio_cli-{CLI_PROJECT['version']}-py3-none-any.whl"


def get(live_server, path, **headers):
    return requests.get(live_server.url + path, headers=headers, timeout=30)


def test_the_commands_and_scripts_name_this_server(live_server):
    for prefix in ("cli-exposer", "cli"):  # latest's paths, and 2.18's (deprecated in latest)
        for platform in ("unix", "linux", "mac"):
            command = get(live_server, f"/api/v1/{prefix}/installer/{platform}/commands")
            assert command.status_code == 200
            assert command.json() == {
                "command": f"curl -fsSL {live_server.url}/api/v1/cli-exposer/installer/{platform} | sh"}
            script = get(live_server, f"/api/v1/{prefix}/installer/{platform}")
            assert script.status_code == 200 and script.headers["Content-Type"] == "text/plain; charset=utf-8"
            system = "darwin" if platform == "mac" else "linux"
            assert f"/api/v1/cli-exposer/dist/{system}/$(uname -m)/runai" in script.text
            assert f"SERVER={live_server.url}\n" in script.text and f"WHEEL={WHEEL}\n" in script.text
            checked = subprocess.run(["sh", "-n"], input=script.text, text=True, capture_output=True)
            assert checked.returncode == 0, checked.stderr
        windows = get(live_server, f"/api/v1/{prefix}/installer/windows/commands").json()["command"]
        assert f"{live_server.url}/api/v1/cli-exposer/dist/windows/amd64/runai" in windows and WHEEL in windows
    # A stale token is no reason to refuse a public download.
    assert get(live_server, "/api/v1/cli-exposer/installer/linux", Authorization="Bearer stale").status_code == 200


def test_the_wheel_is_one_file_for_every_platform_and_installs(live_server, tmp_path):
    answers = [get(live_server, f"/api/v1/{prefix}/dist/{system}/{arch}/runai")
               for prefix in ("cli-exposer", "cli") for system in ("linux", "darwin", "windows")
               for arch in ("amd64", "arm64", "x86_64", "aarch64")]
    assert {a.status_code for a in answers} == {200} and len({a.content for a in answers}) == 1
    wheel = answers[0]
    assert wheel.headers["Content-Type"] == "application/octet-stream"
    assert wheel.headers["Content-Disposition"] == f'attachment; filename="{WHEEL}"'
    assert wheel.headers["ETag"] == f'"{hashlib.sha256(wheel.content).hexdigest()}"'
    with zipfile.ZipFile(io.BytesIO(wheel.content)) as archive:
        metadata = archive.read(f"paas_studio_cli-{CLI_PROJECT['version']}.dist-info/METADATA").decode()
        assert archive.testzip() is None and "paas_cli/main.py" in archive.namelist()
    assert [line.split(": ", 1)[1] for line in metadata.splitlines() if line.startswith("Requires-Dist")] == \
        CLI_PROJECT["dependencies"]
    (tmp_path / WHEEL).write_bytes(wheel.content)
    installed = subprocess.run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
                                "--target", str(tmp_path / "site"), str(tmp_path / WHEEL)],
                               capture_output=True, text=True, timeout=120)
    assert installed.returncode == 0, installed.stderr
    script = tmp_path / "site" / "bin" / "studio"
    ran = subprocess.run([sys.executable, str(script), "--version"], capture_output=True, text=True, timeout=60,
                         env={"PYTHONPATH": str(tmp_path / "site"), "PATH": "/usr/bin:/bin"})
    assert ran.returncode == 0 and ran.stdout.strip() == f"studio, version {CLI_PROJECT['version']}", ran


def test_unknown_platforms_and_documents_are_json_404s_and_the_manual_is_html(live_server):
    for path, named in (("/api/v1/cli-exposer/dist/plan9/amd64/runai", "plan9"),
                        ("/api/v1/cli-exposer/dist/linux/mips/runai", "mips"),
                        ("/api/v1/cli/dist/Linux/amd64/runai", "Linux"),
                        ("/api/v1/cli-exposer/docs/runai.md", "runai.md"),
                        ("/api/v1/cli-exposer/docs/secrets.env", "secrets.env")):
        answer = get(live_server, path)
        assert answer.status_code == 404 and named in answer.json()["message"], (path, answer.text)
    assert get(live_server, "/api/v1/cli-exposer/installer/windows").status_code == 404  # Run:ai has none either
    manual = get(live_server, "/api/v1/cli-exposer/docs/cli.md")
    assert manual.status_code == 200 and manual.headers["Content-Type"] == "text/html; charset=utf-8"
    assert "<h2>Exit codes</h2>" in manual.text and "<script" not in manual.text
