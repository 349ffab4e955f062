"""Packages whose `__init__` imports everything they hold, made to import each name when it is first asked for.

The official Kubernetes client's `kubernetes`, `kubernetes.client`, `.client.api`, `.client.models` and `.utils`
import every API class, every model and the dynamic client (~820 modules) on the first `import kubernetes…`:
29 MiB in every process (web, worker, watcher: 133 → 104 MiB once Django is set up), which read and write plain
dicts and never touch a model. `lazy(...)`, called before the
first import, puts in `sys.modules` a module for each package that knows its names from the package's own
`__init__` source (each `from X import Y` and `from . import Y`, each constant) and imports X when Y is first read;
a submodule is imported as ever. Code that does use a model (`client.V1Pod`, `client.CoreV1Api`) gets it, on
first use. Nothing is done once the package is imported: that process keeps the eager one.
"""

import ast
import importlib
import importlib.machinery
import importlib.util
import sys
import threading
import types
from pathlib import Path

_lock = threading.Lock()


class LazyPackage(types.ModuleType):
    """A package whose names come from their modules when first read (PEP 562's module `__getattr__`)."""

    def __init__(self, spec: importlib.machinery.ModuleSpec, names: dict[str, tuple[str, str | None]]):
        super().__init__(spec.name)
        self.__spec__, self.__loader__, self.__file__ = spec, spec.loader, spec.origin
        self.__path__, self.__package__ = list(spec.submodule_search_locations or []), spec.name
        self._lazy_names = names

    def __getattr__(self, name: str):
        if name.startswith("__"):
            raise AttributeError(name)
        module, attribute = self._lazy_names.get(name, (f"{self.__name__}.{name}", None))
        try:
            found = importlib.import_module(module)
        except ModuleNotFoundError as exc:
            if exc.name != module:
                raise
            raise AttributeError(f"module {self.__name__!r} has no attribute {name!r}") from None
        value = found if attribute is None else getattr(found, attribute)
        setattr(self, name, value)
        return value

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._lazy_names))


def _names(package: str, init: Path) -> tuple[dict[str, tuple[str, str | None]], dict[str, object]]:
    """{name: (module, attribute or None for the module itself)} and {name: constant} of a package's `__init__`."""
    names, constants = {}, {}
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.module != "__future__":
            base = importlib.util.resolve_name("." * node.level + (node.module or ""), package) \
                if node.level else node.module
            for alias in node.names:
                if node.module is None:  # from . import client: the submodule itself
                    names[alias.asname or alias.name] = (f"{base}.{alias.name}", None)
                else:
                    names[alias.asname or alias.name] = (base, alias.name)
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    constants[target.id] = node.value.value
    return names, constants


def lazy(*packages: str) -> bool:
    """Make these packages (a parent before its children) lazy, unless the first is imported already.
    Whether they were."""
    with _lock:
        if packages[0] in sys.modules:
            return False
        made = {}
        for package in packages:
            parent, _, child = package.rpartition(".")
            search = made[parent].__path__ if parent else None
            spec = importlib.machinery.PathFinder.find_spec(package, search)
            if spec is None or not spec.submodule_search_locations:
                return False
            names, constants = _names(package, Path(spec.origin))
            module = LazyPackage(spec, names)
            module.__dict__.update(constants)
            made[package] = module
        for package, module in made.items():
            sys.modules[package] = module
            parent, _, child = package.rpartition(".")
            if parent:
                setattr(made[parent], child, module)
        return True
