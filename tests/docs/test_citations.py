"""The product's comments and docstrings cite only what the repository holds: no document that is not in it (the
"CONTRACT §n" and "seed NNN" of the documents the first versions were built from), and no `.py` path that does not
exist (a module that moved or was renamed). Say the rule itself, or point at the test or module that holds it."""

import ast
import io
import re
import tokenize
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
NOT_PRODUCT = {"tests", "var", "node_modules", "__pycache__"}
ABSENT_DOCUMENT = re.compile(r"\bCONTRACT\b|\b[Ss]eeds? ?\d{3}\b|\bseeds?/|\b[Tt]he seeds\b")
PY_PATH = re.compile(r"(?<![\w./-])([A-Za-z_][\w/.-]*\.py)\b")

# Docstrings that drf-spectacular publishes as descriptions in /api/schema/, which must stay byte-identical while
# the house moves (issue 35): (the class they document, what they cite). Rewrite them, and drop them from here,
# with a change that may change the schema's text.
IN_THE_API_SCHEMA = {
    ("VersionProfileListView", "Seed 000"),
    ("KindViewSet", "the seeds"),
    ("WorkloadCreatedSerializer", "Seeds 001"),
    ("WorkloadCreatedSerializer", "the seeds"),
    ("InferenceSpec", "seed 001"),
    ("WorkspaceSpec", "Seed 003"),
    ("WorkspaceSpec", "CONTRACT"),
    ("Compute", "the seeds"),
    ("DistributedViewSet", "workloads/manifest_distributed.py"),
}


def product_files():
    for path in sorted(ROOT.rglob("*.py")):
        parts = path.relative_to(ROOT).parts
        if not any(part.startswith(".") or part in NOT_PRODUCT for part in parts):
            yield path


def comments_and_docstrings(source: str):
    """(line, the class or function documented or None, text) of every comment and docstring."""
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], None, token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            docstring = ast.get_docstring(node, clean=False)
            if docstring is not None:
                yield node.body[0].lineno, getattr(node, "name", None), docstring


def exists(cited: str, path: Path) -> bool:
    """From the repository's root, or from the citing file's folder or one above it."""
    return any((folder / cited).exists() for folder in [ROOT, *path.parents] if folder == ROOT or ROOT in folder.parents)


def citations():
    for path in product_files():
        where = path.relative_to(ROOT)
        for line, holder, text in comments_and_docstrings(path.read_text()):
            for match in ABSENT_DOCUMENT.finditer(text):
                if (holder, match.group(0)) not in IN_THE_API_SCHEMA:
                    yield f"{where}:{line}: cites {match.group(0)!r}, which is not in the repository"
            for match in PY_PATH.finditer(text):
                if not exists(match.group(1), path) and (holder, match.group(1)) not in IN_THE_API_SCHEMA:
                    yield f"{where}:{line}: cites {match.group(1)}, which does not exist"


def test_comments_and_docstrings_cite_only_what_the_repository_holds():
    found = list(citations())
    assert not found, "\n".join(found)


def test_the_check_sees_a_bad_citation(tmp_path):
    source = '"""Rules of CONTRACT §3 (seed 003)."""\n\nX = 1  # see workloads/watcher.py\n'
    texts = [text for _, _, text in comments_and_docstrings(source)]
    assert [m.group(0) for text in texts for m in ABSENT_DOCUMENT.finditer(text)] == ["CONTRACT", "seed 003"]
    cited = [m.group(1) for text in texts for m in PY_PATH.finditer(text)]
    assert cited == ["workloads/watcher.py"] and not exists(cited[0], ROOT / "workloads" / "services.py")
    assert exists("workloads/cluster/watcher.py", ROOT / "studio" / "settings.py")
    assert exists("placement.py", ROOT / "workloads" / "manifests" / "parts.py")
