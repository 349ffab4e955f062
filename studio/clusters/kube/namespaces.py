"""Project namespaces: ensured (created with their labels, at most once a minute per process) and made
usable by the product's own account (deploy/rbac.yaml's namespace role)."""


import base64
import json
import time

from studio.clusters.kube.client import AlreadyExists, Connection, PermanentClusterError
from studio.clusters.kube.objects import create, get

NAMESPACE_ROLE = "paas-studio-namespace"  # deploy/rbac.yaml: what the product may do inside a project namespace


NAMESPACE_ENSURED_SECONDS = 60.0


def namespace_ensure(conn: Connection, name: str, *, labels: dict | None = None) -> bool:
    """Create the namespace unless it exists, and give this account its rights there; True when created."""
    created = _namespace_create(conn, name, labels=labels)
    namespace_access_ensure(conn, name)
    conn.namespaces_ensured[name] = time.monotonic()
    return created


def namespace_recently_ensured(conn: Connection, name: str) -> bool:
    """Whether this process ensured the namespace in the last minute: a burst of pushes to one project then
    makes one request each (the object) instead of three (namespace, RoleBinding, object). A namespace deleted
    meanwhile answers the object's create 404: `namespace_forget`, and the caller ensures it again."""
    ensured = conn.namespaces_ensured.get(name)
    return ensured is not None and time.monotonic() - ensured < NAMESPACE_ENSURED_SECONDS


def namespace_forget(conn: Connection, name: str) -> None:
    conn.namespaces_ensured.pop(name, None)


def _token_subject(conn: Connection) -> dict | None:
    """The RBAC subject of the connection's token when it is a service account's (a JWT whose `sub` is
    system:serviceaccount:<namespace>:<name>); None for any other credential. Read, not verified: it only
    names whom to bind, and the server checks the token on every request."""
    token = (conn.api.configuration.api_key or {}).get("authorization", "").removeprefix("Bearer ").strip()
    parts = token.split(".")
    if len(parts) != 3:
        return None
    try:
        claims = json.loads(base64.urlsafe_b64decode(parts[1] + "=" * (-len(parts[1]) % 4)))
    except (ValueError, TypeError):
        return None
    subject = str(claims.get("sub") or "").split(":") if isinstance(claims, dict) else []
    if len(subject) != 4 or subject[:2] != ["system", "serviceaccount"]:
        return None
    return {"kind": "ServiceAccount", "namespace": subject[2], "name": subject[3]}


def namespace_access_ensure(conn: Connection, namespace: str, *, wait_seconds: float = 10.0) -> bool:
    """Bind the ClusterRole `paas-studio-namespace` to this service account in `namespace` (a RoleBinding), as
    deploy/rbac.yaml lets it do for exactly that role; True when the binding was made now. Skipped for other
    credentials (an admin kubeconfig, kubesim's token), and where the cluster's operator made the binding
    (409) or keeps RBAC to themselves (403: the creates that follow say what is missing)."""
    subject = _token_subject(conn)
    if subject is None:
        return False
    binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
               "metadata": {"name": "paas-studio", "namespace": namespace,
                            "labels": {"app.kubernetes.io/managed-by": "paas-studio"}},
               "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "ClusterRole", "name": NAMESPACE_ROLE},
               "subjects": [subject]}
    path = f"/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings"
    try:
        conn.request("POST", path, verb="create", resource="rolebindings.rbac.authorization.k8s.io", body=binding)
    except AlreadyExists:
        return False
    except PermanentClusterError as exc:
        if exc.status == 403:
            return False
        raise
    # The authorizer reads bindings from a cache: wait until the new rights are in force before using them.
    deadline = time.monotonic() + wait_seconds
    while True:
        try:
            conn.request("GET", f"/apis/batch/v1/namespaces/{namespace}/jobs", verb="list", resource="jobs.batch",
                         query={"limit": 1})
            return True
        except PermanentClusterError as exc:
            if exc.status != 403 or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def _namespace_create(conn: Connection, name: str, *, labels: dict | None = None) -> bool:
    body = {
        "apiVersion": "v1",
        "kind": "Namespace",
        "metadata": {"name": name, "labels": {"app.kubernetes.io/managed-by": "paas-studio", **(labels or {})}},
    }
    try:
        create(conn, body)
    except AlreadyExists:
        return False
    except PermanentClusterError as exc:
        # Least privilege: an account that may not create namespaces is answered 403 even when it exists.
        if exc.status != 403:
            raise
        try:
            get(conn, "v1", "Namespace", None, name)
        except PermanentClusterError:
            raise exc from None
        return False
    return True
