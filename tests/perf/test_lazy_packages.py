"""perf/lazy_packages: a package's names imported when first read, and the Kubernetes client made so in the
product's processes (no model loaded by a process that only reads dicts)."""

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def _run(code: str, *, path: Path | None = None) -> dict:
    """Run `code` in a fresh interpreter (the imports of this one are already made); its last line is JSON."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(str(p) for p in (path, ROOT) if p)}
    done = subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True, env=env,
                          cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout.strip().splitlines()[-1])


def _eager_package(root: Path) -> None:
    """eager/: an __init__ that imports every submodule, each recording that it was imported."""
    package = root / "eager"
    (package / "inner").mkdir(parents=True)
    (package / "__init__.py").write_text(
        'VERSION = "1.2"\nfrom eager.alpha import Alpha\nfrom eager.beta import Beta as B\nfrom . import inner\n')
    for name in ("alpha", "beta"):
        (package / f"{name}.py").write_text(
            f"import builtins\nbuiltins.LOADED = getattr(builtins, 'LOADED', []) + [{name!r}]\n"
            f"class {name.capitalize()}: pass\n")
    (package / "inner" / "__init__.py").write_text("from eager.inner.gamma import Gamma\n")
    (package / "inner" / "gamma.py").write_text(
        "import builtins\nbuiltins.LOADED = getattr(builtins, 'LOADED', []) + ['gamma']\nclass Gamma: pass\n")


def test_names_are_imported_when_first_read(tmp_path):
    _eager_package(tmp_path)
    found = _run("""
        import builtins, json, sys
        from perf.lazy_packages import lazy
        made = lazy("eager", "eager.inner")
        import eager
        before = list(getattr(builtins, "LOADED", []))
        alpha = eager.Alpha.__module__
        after_alpha = list(builtins.LOADED)
        from eager import B
        from eager.inner import Gamma
        try:
            eager.missing
            missing = "found"
        except AttributeError as exc:
            missing = str(exc)
        print(json.dumps({"made": made, "again": lazy("eager"), "before": before, "alpha": alpha,
                          "after_alpha": after_alpha, "loaded": builtins.LOADED, "b": B.__name__,
                          "gamma": Gamma.__module__, "version": eager.VERSION, "missing": missing,
                          "inner_is_module": eager.inner is sys.modules["eager.inner"], "dir": "Alpha" in dir(eager)}))
    """, path=tmp_path)
    assert found["made"] is True and found["again"] is False
    assert found["before"] == []  # importing the package imported none of its names
    assert found["alpha"] == "eager.alpha" and found["after_alpha"] == ["alpha"]
    assert found["loaded"] == ["alpha", "beta", "gamma"]
    assert found["b"] == "Beta" and found["gamma"] == "eager.inner.gamma" and found["version"] == "1.2"
    assert "has no attribute 'missing'" in found["missing"]
    assert found["inner_is_module"] and found["dir"]


def test_an_imported_package_is_left_eager(tmp_path):
    _eager_package(tmp_path)
    found = _run("""
        import builtins, json
        import eager
        from perf.lazy_packages import lazy
        print(json.dumps({"made": lazy("eager"), "loaded": builtins.LOADED}))
    """, path=tmp_path)
    assert found == {"made": False, "loaded": ["alpha", "beta", "gamma"]}


def test_the_product_loads_no_kubernetes_model_and_models_still_work():
    """A watcher's imports (Django set up, the watch loop, the Kubernetes package) load none of the client's
    ~700 models or ~60 API classes; code that names one (the tests, kubectl-like scripts) still gets it."""
    found = _run("""
        import json, os, sys
        os.environ["DJANGO_SETTINGS_MODULE"] = "tests.settings"
        import django
        django.setup()
        from studio.clusters import kube  # noqa: F401
        from workloads.cluster import watcher  # noqa: F401
        models = sorted(m for m in sys.modules if m.startswith(("kubernetes.client.models.", "kubernetes.client.api.")))
        from kubernetes import client, utils
        pod = client.V1Pod(metadata=client.V1ObjectMeta(name="p"))
        print(json.dumps({"models": models, "pod": client.ApiClient().sanitize_for_serialization(pod),
                          "api": client.CoreV1Api.__module__, "quantity": str(utils.parse_quantity("1Gi"))}))
    """)
    assert found["models"] == []
    assert found["pod"] == {"metadata": {"name": "p"}}
    assert found["api"] == "kubernetes.client.api.core_v1_api"
    assert found["quantity"] == "1073741824"
