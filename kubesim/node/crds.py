"""CustomResourceDefinitions (apiextensions.k8s.io/v1, which v1.16+ accepts) for the custom resources kubesim's node
side plays on another API server: Knative Serving's Service, the Kubeflow Training Operator's jobs, and gang
schedulers' PodGroups — the names, scope, short names, categories, status subresource and printer columns of the
projects' own CRDs, with their schemas open (`x-kubernetes-preserve-unknown-fields`: no operator's webhook here
to validate or default). Installed, they make a bare control plane serve what kubesim's own server serves; the
node side (remote.py) finds them by discovery and runs them as kubesim does.

    python -m kubesim.node.crds knative kubeflow > crds.json && kubectl apply -f crds.json
"""

import json
import sys
import time

from ..resources import GROUPS

SETS = {"knative": ("serving.knative.dev",), "kubeflow": ("kubeflow.org",),
        "scheduler-plugins": ("scheduling.x-k8s.io",), "volcano": ("scheduling.volcano.sh",)}
_READY = ".status.conditions[?(@.type=='Ready')]"
COLUMNS = {
    "serving.knative.dev": [
        {"name": "URL", "type": "string", "jsonPath": ".status.url"},
        {"name": "LatestCreated", "type": "string", "jsonPath": ".status.latestCreatedRevisionName"},
        {"name": "LatestReady", "type": "string", "jsonPath": ".status.latestReadyRevisionName"},
        {"name": "Ready", "type": "string", "jsonPath": _READY + ".status"},
        {"name": "Reason", "type": "string", "jsonPath": _READY + ".reason"}],
    "kubeflow.org": [
        {"name": "State", "type": "string", "jsonPath": ".status.conditions[-1:].type"},
        {"name": "Age", "type": "date", "jsonPath": ".metadata.creationTimestamp"}],
}
_OPEN = {"type": "object", "x-kubernetes-preserve-unknown-fields": True}


def definitions(*sets: str) -> list[dict]:
    """The CRDs of the named sets (`knative`, `kubeflow`, `scheduler-plugins`, `volcano`)."""
    out = []
    for name in sets:
        for group in SETS[name]:
            for res in GROUPS[group]:
                names = {"plural": res.plural, "singular": res.kind.lower(), "kind": res.kind,
                         "listKind": f"{res.kind}List"}
                if res.short:
                    names["shortNames"] = list(res.short)
                if res.categories:
                    names["categories"] = list(res.categories)
                version = {"name": res.version, "served": True, "storage": True,
                           "subresources": {"status": {}},
                           "schema": {"openAPIV3Schema": {"type": "object", "properties": {
                               "spec": _OPEN, "status": _OPEN}}}}
                if COLUMNS.get(group):
                    version["additionalPrinterColumns"] = COLUMNS[group]
                out.append({"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
                            "metadata": {"name": f"{res.plural}.{group}",
                                         "labels": {"app.kubernetes.io/part-of": "kubesim"}},
                            "spec": {"group": group, "scope": "Namespaced" if res.namespaced else "Cluster",
                                     "names": names, "versions": [version]}})
    return out


def install(http, *sets: str, timeout: float = 30) -> list[str]:
    """Create the CRDs of `sets` on the server behind `http` (remote.Http), and wait until each is Established."""
    names = []
    for crd in definitions(*sets):
        try:
            http.call("POST", "/apis/apiextensions.k8s.io/v1/customresourcedefinitions", body=crd)
        except Exception as exc:  # noqa: BLE001 - 409: installed already
            if getattr(exc, "status", None) != 409:
                raise
        names.append(crd["metadata"]["name"])
    deadline = time.monotonic() + timeout
    for name in names:
        while True:
            crd = http.call("GET", f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{name}")
            if any(c["type"] == "Established" and c["status"] == "True"
                   for c in (crd.get("status") or {}).get("conditions") or []):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"CRD {name} not Established after {timeout:.0f}s")
            time.sleep(0.2)
    return names


def uninstall(http, *sets: str, timeout: float = 60) -> None:
    """Delete the CRDs of `sets` (with every object of theirs) and wait until the server no longer serves them."""
    paths = [f"/apis/apiextensions.k8s.io/v1/customresourcedefinitions/{crd['metadata']['name']}"
             for crd in definitions(*sets)]
    for path in paths:
        try:
            http.call("DELETE", path)
        except Exception as exc:  # noqa: BLE001 - 404: gone already
            if getattr(exc, "status", None) != 404:
                raise
    deadline = time.monotonic() + timeout
    for path in paths:
        while True:
            try:
                http.call("GET", path)
            except Exception as exc:  # noqa: BLE001
                if getattr(exc, "status", None) == 404:
                    break
                raise
            if time.monotonic() > deadline:
                raise TimeoutError(f"{path} still there after {timeout:.0f}s")
            time.sleep(0.2)


def main(argv=None) -> int:
    sets = (argv if argv is not None else sys.argv[1:]) or ["knative", "kubeflow"]
    json.dump({"apiVersion": "v1", "kind": "List", "items": definitions(*sets)}, sys.stdout, indent=2)
    print()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
