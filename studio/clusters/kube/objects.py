"""Discovery and objects: get, create (or adopt), dry runs, patch, delete, list in pages, watch. Plain dicts."""

import json
import time
from collections.abc import Iterator

from kubernetes import watch as k8s_watch
from kubernetes.client.exceptions import ApiException

from perf import kept_json
from perf.lines import whole_lines
from studio.clusters.kube.client import (
    LIST_PAGE_SIZE,
    MANAGED_BY_SELECTOR,
    OLDER_VERSIONS,
    WORKLOAD_ID_LABEL,
    AlreadyExists,
    Connection,
    Expired,
    NotFound,
    PermanentClusterError,
    TransientClusterError,
    resource_label,
    resource_path,
    sorted_error,
)

# --- discovery -----------------------------------------------------------------------------------------

def version(conn: Connection) -> dict:
    info = conn.request("GET", "/version", verb="get", resource="version", timeout=3)
    return {"gitVersion": info.get("gitVersion", ""), "platform": info.get("platform", "")}


def ready(conn: Connection) -> None:
    """The server's own readiness check (`/readyz`, public, as `/version`): returns when it says ok, raises the
    sorted error otherwise (a refused connection, a 5xx while it starts)."""
    response = conn.request("GET", "/readyz", verb="get", resource="readyz", timeout=3, stream=True,
                            accept="text/plain")
    response.release_conn()


def has_api_group(conn: Connection, group: str) -> bool:
    """Whether the server serves an API group (e.g. `serving.knative.dev` when Knative is installed)."""
    return group in api_groups(conn)


def api_groups(conn: Connection) -> set[str]:
    """The API groups the server serves, from one discovery request."""
    groups = conn.request("GET", "/apis", verb="get", resource="discovery") or {}
    return {g.get("name") for g in groups.get("groups") or []}


def served_version(conn: Connection, api_version: str) -> str:
    """`api_version`, or the older one the cluster serves instead (OLDER_VERSIONS); asked once per connection."""
    older = OLDER_VERSIONS.get(api_version)
    if older is None:
        return api_version
    if api_version not in conn.served_versions:
        group, _, version = api_version.partition("/")
        try:
            served = conn.request("GET", f"/apis/{group}", verb="get", resource="discovery") or {}
        except NotFound:
            served = {}
        versions = {v.get("version") for v in served.get("versions") or []}
        conn.served_versions[api_version] = api_version if version in versions or not versions else older
    return conn.served_versions[api_version]


# --- objects -------------------------------------------------------------------------------------------

def get(conn: Connection, api_version: str, kind: str, namespace: str | None, name: str) -> dict:
    api_version = served_version(conn, api_version)
    path = resource_path(api_version, kind, namespace=namespace, name=name)
    return conn.request("GET", path, verb="get", resource=resource_label(api_version, kind))


def create(conn: Connection, obj: dict) -> dict:
    namespace = obj["metadata"].get("namespace")
    obj = {**obj, "apiVersion": served_version(conn, obj["apiVersion"])}
    path = resource_path(obj["apiVersion"], obj["kind"], namespace=namespace)
    return conn.request("POST", path, verb="create", resource=resource_label(obj["apiVersion"], obj["kind"]), body=obj)


def dry_run_create(conn: Connection, obj: dict) -> dict:
    """The server's own verdict on creating `obj` (`dryRun=All`: admission, validation and defaulting, nothing
    stored): `{"allowed", "code", "reason", "message"}`. `allowed` is None when the cluster gave no verdict
    (unreachable, overloaded): the message is then our classification, never the remote body."""
    namespace = obj["metadata"].get("namespace")
    try:
        obj = {**obj, "apiVersion": served_version(conn, obj["apiVersion"])}
        path = resource_path(obj["apiVersion"], obj["kind"], namespace=namespace)
        conn.request("POST", path, verb="create", resource=resource_label(obj["apiVersion"], obj["kind"]), body=obj,
                     query={"dryRun": "All"})
    except TransientClusterError as exc:
        return {"allowed": None, "code": exc.status, "reason": "ClusterUnavailable", "message": exc.message}
    except PermanentClusterError as exc:
        return {"allowed": False, "code": exc.status, "reason": exc.reason, "message": exc.message}
    return {"allowed": True, "code": 201, "reason": "", "message": "The cluster would accept it."}


def dry_run_patch(conn: Connection, obj: dict, body: dict) -> dict:
    """`dry_run_create`'s verdict for a JSON merge patch of the existing `obj` (an upgrade's preview)."""
    meta = obj["metadata"]
    try:
        api_version = served_version(conn, obj["apiVersion"])
        path = resource_path(api_version, obj["kind"], namespace=meta.get("namespace"), name=meta["name"])
        conn.request("PATCH", path, verb="patch", resource=resource_label(api_version, obj["kind"]), body=body,
                     content_type="application/merge-patch+json", query={"dryRun": "All"})
    except TransientClusterError as exc:
        return {"allowed": None, "code": exc.status, "reason": "ClusterUnavailable", "message": exc.message}
    except PermanentClusterError as exc:
        return {"allowed": False, "code": exc.status, "reason": exc.reason, "message": exc.message}
    return {"allowed": True, "code": 200, "reason": "", "message": "The cluster would accept the change."}


def exists(conn: Connection, api_version: str, kind: str, namespace: str | None, name: str) -> bool:
    try:
        get(conn, api_version, kind, namespace, name)
    except NotFound:
        return False
    return True


def create_or_adopt(conn: Connection, obj: dict, *, owner_label: str = WORKLOAD_ID_LABEL) -> tuple[dict, bool]:
    """(object, created). Names are deterministic, so 409 AlreadyExists usually means "done before": the
    existing object is adopted when it carries the same `owner_label` value, else it is a permanent conflict."""
    try:
        return create(conn, obj), True
    except AlreadyExists:
        meta = obj["metadata"]
        existing = get(conn, obj["apiVersion"], obj["kind"], meta.get("namespace"), meta["name"])
        ours = (meta.get("labels") or {}).get(owner_label)
        theirs = ((existing.get("metadata") or {}).get("labels") or {}).get(owner_label)
        if ours != theirs:
            raise PermanentClusterError(
                f'{obj["kind"]} "{meta["name"]}" already exists in namespace {meta.get("namespace")} and belongs '
                f"to {'another workload' if theirs else 'someone else'}.", status=409, reason="AlreadyExists",
            ) from None
        return existing, False


def patch(conn: Connection, api_version: str, kind: str, namespace: str | None, name: str, body: dict) -> dict:
    """A JSON merge patch (RFC 7386): works for custom resources too, unlike a strategic merge."""
    api_version = served_version(conn, api_version)
    path = resource_path(api_version, kind, namespace=namespace, name=name)
    return conn.request("PATCH", path, verb="patch", resource=resource_label(api_version, kind), body=body,
                        content_type="application/merge-patch+json")


def delete(conn: Connection, api_version: str, kind: str, namespace: str | None, name: str, *,
           propagation: str = "Background") -> bool:
    """Delete with dependents (pods of a Job, ReplicaSets of a Deployment); False when already gone."""
    api_version = served_version(conn, api_version)
    path = resource_path(api_version, kind, namespace=namespace, name=name)
    try:
        conn.request("DELETE", path, verb="delete", resource=resource_label(api_version, kind),
                     body={"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation})
    except NotFound:
        return False
    return True



def list_objects(conn: Connection, api_version: str, kind: str, *, namespace: str | None = None,
                 label_selector: str = "", field_selector: str = "", limit: int = LIST_PAGE_SIZE) -> list[dict]:
    """Every object of a kind matching the selectors, read `limit` at a time (`continue` tokens). A token that
    expired (410) starts the list over, as client-go's pager does."""
    return list_snapshot(conn, api_version, kind, namespace=namespace, label_selector=label_selector,
                         field_selector=field_selector, limit=limit)[0]


def list_snapshot(conn: Connection, api_version: str, kind: str, *, namespace: str | None = None,
                  label_selector: str = "", field_selector: str = "", limit: int = LIST_PAGE_SIZE,
                  each_page=None, kept=None) -> tuple[list[dict], str]:
    """`list_objects`, and the resourceVersion the list was read at (every page of a list is one snapshot): a
    watch from it misses nothing that happened after. `each_page(objects, kept)`, when given, is kept instead of each
    page's objects as the page arrives (a page at a time in memory, not the whole list). `kept`: a page decoder
    (`perf.kept_json.list_decoder`) keeping only the fields `each_page` reads; `each_page` learns whether the page
    was decoded so (True), or read whole as the shape did not fit it (False)."""
    served = served_version(conn, api_version)
    path = resource_path(served, kind, namespace=namespace)
    resource = resource_label(api_version, kind)
    items: list[dict] = []
    token, version = "", ""
    while True:
        query = {"labelSelector": label_selector, "fieldSelector": field_selector, "limit": limit,
                 "continue": token}
        try:
            page = conn.request("GET", path, verb="list", resource=resource, query=query, kept=kept) or {}
        except Expired:
            if not token:
                raise
            items, token = [], ""
            continue
        found = _with_kind(page.get("items") or [], api_version, kind)
        items.extend(found if each_page is None else each_page(found, isinstance(page, kept_json.Kept)))
        version = version if token else (page.get("metadata") or {}).get("resourceVersion") or ""
        token = (page.get("metadata") or {}).get("continue") or ""
        if not token:
            return items, version


def list_managed(conn: Connection, api_version: str, kind: str, *, label_selector: str = MANAGED_BY_SELECTOR,
                 field_selector: str = "") -> list[dict]:
    """Every object of a kind in the namespaces this product manages: one list across all namespaces where
    the account may, else (deploy/rbac.yaml: rights only inside project namespaces) one list in each namespace
    labelled managed-by=paas-studio. Which one is learned from the first 403 and kept for the connection."""
    if not conn.namespaced_reads:
        try:
            return list_objects(conn, api_version, kind, label_selector=label_selector,
                                field_selector=field_selector)
        except PermanentClusterError as exc:
            if exc.status != 403:
                raise
            conn.namespaced_reads = True
    items: list[dict] = []
    for namespace in list_objects(conn, "v1", "Namespace", label_selector=MANAGED_BY_SELECTOR):
        try:
            items.extend(list_objects(conn, api_version, kind, namespace=namespace["metadata"]["name"],
                                      label_selector=label_selector, field_selector=field_selector))
        except PermanentClusterError as exc:
            # A namespace without our RoleBinding: being deleted (its bindings go first), or one the operator
            # has not bound yet. Nothing of ours can be read or repaired there; the others still sync.
            if exc.status != 403:
                raise
    return items


def _with_kind(items: list[dict], api_version: str, kind: str) -> list[dict]:
    """Items of a typed list carry no apiVersion/kind; put them back so each object stands alone."""
    for item in items:
        item.setdefault("apiVersion", api_version)
        item.setdefault("kind", kind)
    return items


class _Watch(k8s_watch.Watch):
    """The official client's watch, each event's JSON read once into plain dicts (no typed models; only the
    fields `kept` names, when given: `perf.kept_json.event_decoder`), and its resourceVersion moved by bookmarks
    too (the client keeps it only from typed objects)."""

    def __init__(self, kept=None):
        super().__init__(return_type="object")
        self.kept = kept

    def unmarshal_event(self, data, return_type):
        if not data or data.isspace():
            return None
        event = kept_json.watch_event(data, self.kept)
        event["raw_object"] = event.get("object") or {}
        if event.get("type") != "ERROR":
            version = (event["raw_object"].get("metadata") or {}).get("resourceVersion")
            if version:
                self.resource_version = version
        return event


def watch_stream(conn: Connection, api_version: str, kind: str, *, resource_version: str,
                 namespace: str | None = None, label_selector: str = "", field_selector: str = "",
                 timeout_seconds: int = 300, on_response=None, kept=None) -> Iterator[dict]:
    """One WATCH request from `resource_version`, with bookmarks: its events ({"type", "object", "kept"}: ADDED,
    MODIFIED, DELETED, BOOKMARK) until the server ends it after `timeout_seconds`. A resourceVersion too old for
    the server raises Expired (410), whether it answers so or says so in the stream. `on_response` gets the open
    response (whose `shutdown()` ends the watch from another thread). `kept`: an event decoder keeping only the
    fields the caller reads (`perf.kept_json.event_decoder`); an event's "kept" says it was decoded so (not read
    whole, as an event the shape does not fit is)."""
    served = served_version(conn, api_version)
    path = resource_path(served, kind, namespace=namespace)
    resource = resource_label(api_version, kind)

    def request(*, watch, _preload_content, resource_version=None, timeout_seconds=None, **_):
        query = {"watch": "true", "allowWatchBookmarks": "true", "resourceVersion": resource_version,
                 "timeoutSeconds": timeout_seconds, "labelSelector": label_selector, "fieldSelector": field_selector}
        response = conn.request("GET", path, verb="watch", resource=resource, query=query, stream=True,
                                timeout=(conn.timeout, timeout_seconds + conn.timeout))
        if on_response is not None:
            on_response(response)
        return _WholeLines(response)

    try:
        for event in _Watch(kept).stream(request, resource_version=resource_version, timeout_seconds=timeout_seconds):
            yield {"type": event.get("type"), "object": _with_kind([event["raw_object"]], api_version, kind)[0],
                   "kept": isinstance(event, kept_json.Kept)}
    except ApiException as exc:  # an ERROR event in the stream (the client raises it as an ApiException)
        raise sorted_error(exc) from exc


def watch(conn: Connection, api_version: str, kind: str, *, namespace: str | None = None,
          label_selector: str = "", timeout_seconds: int = 60) -> Iterator[tuple[str, dict]]:
    """("SYNCED", {"items": [...]}) with the full list first, then ("ADDED"|"MODIFIED"|"DELETED", object)
    as they happen, for `timeout_seconds`. When the server says the resourceVersion is too old (410), it
    lists again and yields a fresh "SYNCED" before watching on, as client-go's reflector does."""
    deadline = time.monotonic() + timeout_seconds
    version_seen = None
    while time.monotonic() < deadline:
        if version_seen is None:
            items, version_seen = list_snapshot(conn, api_version, kind, namespace=namespace,
                                                label_selector=label_selector)
            yield "SYNCED", {"items": items}
        try:
            for event in watch_stream(conn, api_version, kind, resource_version=version_seen, namespace=namespace,
                                      label_selector=label_selector,
                                      timeout_seconds=max(1, int(deadline - time.monotonic()))):
                version_seen = (event["object"].get("metadata") or {}).get("resourceVersion") or version_seen
                if event["type"] != "BOOKMARK":
                    yield event["type"], event["object"]
        except Expired:
            version_seen = None


class _WholeLines:
    """A watch response that the official client reads a whole line at a time (perf.lines: its own splitting of a
    chunk of many events costs the square of the chunk's size)."""

    def __init__(self, response):
        self.response = response

    def stream(self, amt=None, decode_content=None):
        return whole_lines(self.response.stream(amt, decode_content=decode_content))

    def close(self) -> None:
        self.response.close()

    def release_conn(self) -> None:
        self.response.release_conn()


def watch_events(response) -> Iterator[dict]:
    """The events of a raw watch response, one JSON object a line."""
    buffer = b""
    for chunk in response.stream(4096, decode_content=True):
        buffer += chunk
        while b"\n" in buffer:
            line, buffer = buffer.split(b"\n", 1)
            if line.strip():
                yield json.loads(line)
    if buffer.strip():
        yield json.loads(buffer)
