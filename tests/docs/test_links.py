"""The README's and docs/' links lead somewhere: every relative link names a file or folder of the repository, every
`#anchor` into a page names one of its headings (as GitHub makes them), and every `.py` path they cite exists (a
bare file name somewhere in the tree)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
LINK = re.compile(r"\]\(([^)\s]+)\)")
PY_PATH = re.compile(r"(?<![\w./-])([A-Za-z_][\w/.-]*\.py)\b")


def pages():
    return [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]


def anchors(page: Path) -> set[str]:
    headings = re.findall(r"^#+ (.+)$", page.read_text(), re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-") for heading in headings}


def broken():
    for page in pages():
        text = re.sub(r"```.*?```", "", page.read_text(), flags=re.S)
        for target in LINK.findall(text):
            if re.match(r"[a-z]+:", target):
                continue
            path, _, anchor = target.partition("#")
            file = (page.parent / path).resolve() if path else page
            if not file.exists():
                yield f"{page.relative_to(ROOT)}: {target} (no such file)"
            elif anchor and file.suffix == ".md" and anchor not in anchors(file):
                yield f"{page.relative_to(ROOT)}: {target} (no such heading)"


def test_every_link_of_the_readme_and_docs_leads_somewhere():
    found = list(broken())
    assert not found, "\n".join(found)


def test_every_python_file_the_readme_and_docs_cite_exists():
    files = {path.relative_to(ROOT).as_posix() for path in ROOT.rglob("*.py")
             if not any(part.startswith(".") for part in path.relative_to(ROOT).parts)}
    names = {name.rsplit("/", 1)[-1] for name in files}
    missing = [f"{page.relative_to(ROOT)}: {cited}" for page in pages() for cited in sorted(set(PY_PATH.findall(
        page.read_text()))) if cited not in (files if "/" in cited else names)]
    assert not missing, "\n".join(missing)
