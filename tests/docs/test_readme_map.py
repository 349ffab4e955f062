"""The README's map of the code names every folder of the product: each top-level folder, and each package inside
`studio/` and `workloads/`, is a line of the map under "Architecture"."""

import re
import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOT_CODE = {"var", "node_modules", "__pycache__", "migrations", "management", "templatetags", "templates", "static",
            "htmlcov", "build", "dist"}


def the_map() -> list[str]:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Architecture"):]
    return re.search(r"```\n(.*?)```", section, re.S).group(1).splitlines()


def named(lines: list[str], indent: int) -> set[str]:
    """The folders a line of the map names at that indent (`bench/ scripts/` names two)."""
    found = set()
    for line in lines:
        if len(line) - len(line.lstrip(" ")) == indent and line.strip():
            found |= set(re.findall(r"(?:^|(?<= ))([\w.-]+)/(?= |$)", line.strip().split("  ")[0]))
    return found


def sub_lines(lines: list[str], folder: str) -> list[str]:
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{folder}/"))
    rest = lines[start + 1:]
    end = next((i for i, line in enumerate(rest) if re.match(r"[\w.-]+/", line)), len(rest))
    return rest[:end]


def tracked_folders() -> set[str]:
    """Top-level folders that hold files of the repository (not what an install or a run leaves beside them)."""
    files = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
    return {line.split("/", 1)[0] for line in files.splitlines() if "/" in line}


def test_every_top_level_folder_is_in_the_map():
    folders = {name for name in tracked_folders() if (ROOT / name).is_dir() and not name.startswith(".")
               and name not in NOT_CODE - {"templates", "static"}}
    assert folders <= named(the_map(), 0), folders - named(the_map(), 0)


def test_every_package_of_studio_and_workloads_is_in_the_map():
    lines = the_map()
    for folder in ("studio", "workloads"):
        packages = {path.name for path in (ROOT / folder).iterdir()
                    if (path / "__init__.py").exists() and path.name not in NOT_CODE}
        assert packages <= named(sub_lines(lines, folder), 2), (folder, packages - named(sub_lines(lines, folder), 2))
