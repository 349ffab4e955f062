"""REST semantics of the simulated API server: create, get, list, update, patch and delete with the real
server's admission, defaulting, optimistic concurrency, generation, finalizers and deletion propagation.

The HTTP layer (server.py) and the controller both go through here, under the store lock.
"""

from __future__ import annotations

import bisect
import json
import random
import time
import uuid

import yaml

from . import defaults, errors, eventsv1, managed, options, patch, subresources, validation
from .addresses import ServiceAddresses
from .errors import ApiError, bad_request
from .selectors import match_fields, match_labels, parse_fields, parse_labels
from .store import jcopy, now_rfc3339

JSON_PATCH, MERGE_PATCH = "application/json-patch+json", "application/merge-patch+json"
STRATEGIC_PATCH, APPLY_PATCH = "application/strategic-merge-patch+json", "application/apply-patch+yaml"
JOB_DELETE_WARNING = ("child pods are preserved by default when jobs are deleted; set propagationPolicy=Background "
                      "to remove them or set propagationPolicy=Orphan to suppress this warning")
# Kinds whose objects carry metadata.generation, bumped when the spec changes.
GENERATION = {"pods", "jobs.batch", "deployments.apps", "replicasets.apps", "services.serving.knative.dev",
              "pytorchjobs.kubeflow.org", "tfjobs.kubeflow.org", "mpijobs.kubeflow.org", "xgboostjobs.kubeflow.org",
              "jaxjobs.kubeflow.org",
              "horizontalpodautoscalers.autoscaling", "ingresses.networking.k8s.io"}
PROTECTED_NAMESPACES = {"default", "kube-system", "kube-public"}
_SERVER_OWNED = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
                 "selfLink", "managedFields")
# Kubernetes' random suffix alphabet: no vowels (no words), no look-alike characters.
SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def random_suffix(n: int = 5) -> str:
    return "".join(random.choices(SUFFIX_ALPHABET, k=n))


# Kinds whose registry answers a DELETE with the deleted object, not a Status (the API server's
# ReturnDeletedObject; the official client's delete_* return types say which).
RETURNS_DELETED_OBJECT = frozenset({"pods", "services", "persistentvolumeclaims", "persistentvolumes", "podtemplates",
                                    "resourcequotas", "serviceaccounts", "storageclasses.storage.k8s.io"})


class Api:
    too_large_wait = 3.0  # seconds a read waits for a resourceVersion the server has not reached
    root_ca_pem: str | None = None  # published in every namespace; the serving CA, else a throwaway one

    def __init__(self, store, registry):
        self.store, self.registry = store, registry
        self.addresses = ServiceAddresses()
        store.listeners.append(self.addresses.on_change)

    # --- reads -----------------------------------------------------------------------------------------------

    def get(self, res, namespace, name) -> dict:
        obj = self.store.get(res.key, namespace, name)
        if obj is None:
            raise errors.not_found(res, name)
        return obj

    def list(self, res, namespace, query: dict) -> dict:
        """A page of a kind. Every page of a paged list shows the kind as it was at the first page's
        resourceVersion (a snapshot rebuilt from the history); a continue token older than the history answers
        410 Expired with a fresh token that goes on from now, as the real server does after etcd's compaction."""
        labels = parse_labels(query.get("labelSelector"))
        fields = parse_fields(query.get("fieldSelector"), res.key)
        try:
            limit = int(query.get("limit") or 0)
        except ValueError:
            raise bad_request(f"invalid limit: {query.get('limit')}") from None
        store, token = self.store, query.get("continue")
        list_rv, after = self._list_revision(query, token, limit)
        snapshot = None
        if list_rv < store.rv:
            snapshot = store.snapshot(res.key, namespace, list_rv)
            if snapshot is None:
                if token:
                    raise errors.continue_expired(options.encode_continue(-1, *after))
                raise errors.expired(errors.LIST_TOO_OLD)
        source = iter(store.iter(res.key, namespace, after) if snapshot is None else options.after_key(snapshot, after))
        items, last, remaining = _page(res, source, labels, fields, limit)
        metadata = {"resourceVersion": str(list_rv)}
        if remaining:
            metadata["continue"] = options.encode_continue(list_rv, last.get("namespace", ""), last["name"])
            if not labels and not fields:
                metadata["remainingItemCount"] = (self._remaining(res, namespace, last) if snapshot is None
                                                  else remaining + sum(1 for _ in source))
        return {"kind": res.list_kind, "apiVersion": res.api_version, "metadata": metadata, "items": items}

    def _list_revision(self, query: dict, token: str | None, limit: int) -> tuple[int, tuple]:
        """The resourceVersion a list reads at, and the key it goes on after (a continue token's)."""
        store = self.store
        rv, match = query.get("resourceVersion") or "", query.get("resourceVersionMatch") or ""
        if token:
            list_rv, after = options.decode_continue(token)
            if list_rv == -1:  # the fresh token of an expired one: the rest of the list, as it is now
                list_rv = store.rv
            return list_rv, after
        if match == "Exact" or (not match and limit and rv not in ("", "0")):
            # An exact read (and a paged read at a given version): that revision's state.
            list_rv = options.parse_resource_version(rv)
            if list_rv > store.rv:
                raise errors.future_revision(list_rv, store.rv)
            return list_rv, ("", "")
        self.wait_for(rv)
        return store.rv, ("", "")

    def _remaining(self, res, namespace, last: dict) -> int:
        last_ns = last.get("namespace", "")
        names = self.store.names(res.key, last_ns)
        count = len(names) - bisect.bisect_left(names, last["name"]) - 1
        if namespace is None:
            count += sum(self.store.count(res.key, ns) for ns in self.store.namespaces(res.key) if ns > last_ns)
        return count

    def wait_for(self, rv: str, timeout: float | None = None) -> None:
        """A read "not older than" a resourceVersion the server has not reached waits for it a little (3 s on the
        real server, whose watch cache may lag), then answers 504 Too large resource version."""
        if rv in ("", "0"):
            return
        wanted = options.parse_resource_version(rv)
        if wanted > self.store.rv:
            self.store.changed.wait_for(lambda: self.store.rv >= wanted,
                                        self.too_large_wait if timeout is None else timeout)
            if wanted > self.store.rv:
                raise errors.too_large_resource_version(wanted, self.store.rv)

    # --- create ----------------------------------------------------------------------------------------------

    def create(self, res, namespace, body, *, dry_run=False, internal=False, manager: str | None = None,
               managed_fields: list | None = None) -> dict:
        """`manager` owns every field of the new object (managedFields); `managed_fields` are set as given
        (server-side apply computed them)."""
        _check_type(res, body)
        obj = {"apiVersion": res.api_version, "kind": res.kind, **{k: v for k, v in body.items()
                                                                   if k not in ("apiVersion", "kind")}}
        schema_clean = False
        if res.builtin and not internal:
            schema_clean = validation.decode_check(obj)
        meta = _new_metadata(res, obj, namespace)
        name = meta["name"]
        if res.namespaced:
            self._check_namespace(res, namespace, name)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        if res.key in defaults.APPLY:  # defaulting precedes validation, as on the real server
            defaults.APPLY[res.key](obj)
        if not internal:
            self._validate(res, obj, name, create=True, schema_clean=schema_clean)
        if self.store.get(res.key, namespace if res.namespaced else None, name) is not None:
            raise errors.already_exists(res, name)
        if res.key == "services":
            self.addresses.allocate(obj, None)
        _server_fields(res, obj, managed_fields, manager)
        if dry_run:
            return obj
        created = self.store.create(res.key, obj)
        if res.key == "namespaces":
            self._namespace_contents(name)
        return created

    def _namespace_contents(self, namespace: str) -> None:
        """What kube-controller-manager puts in every new namespace at once: the `default` ServiceAccount (pods
        need it) and the `kube-root-ca.crt` ConfigMap (the root CA publisher)."""
        if self.root_ca_pem is None:
            from .certs import throwaway_ca_pem

            Api.root_ca_pem = throwaway_ca_pem()
        self.create(self.registry.by_key["serviceaccounts"], namespace, {"metadata": {"name": "default"}},
                    internal=True, manager="kube-controller-manager")
        self.create(self.registry.by_key["configmaps"], namespace,
                    {"metadata": {"name": "kube-root-ca.crt"}, "data": {"ca.crt": self.root_ca_pem}},
                    internal=True, manager="kube-controller-manager")

    def _check_namespace(self, res, namespace, name):
        ns = self.store.get("namespaces", None, namespace)
        if ns is None:
            raise errors.namespace_not_found(namespace)
        if ns["metadata"].get("deletionTimestamp"):
            raise errors.forbidden(res, name, f'{res.qualified} "{name}" is forbidden: unable to create new content '
                                              f"in namespace {namespace} because it is being terminated")

    def _validate(self, res, obj, name, *, create: bool, old: dict | None = None, schema_clean: bool = False):
        meta = obj["metadata"]
        causes = validation.name_causes(res.key, name) if create else []
        if old is not None and old["metadata"].get("deletionTimestamp"):
            added = sorted(set(meta.get("finalizers") or []) - set(old["metadata"].get("finalizers") or []))
            if added:  # ValidateNoNewFinalizers
                found = ", ".join(json.dumps(f) for f in added)
                forbidden = validation.cause("metadata.finalizers", "Forbidden: no new finalizers can be added if the "
                                             f"object is being deleted, found new finalizers []string{{{found}}}",
                                             "FieldValueForbidden")
                # Twice for built-in kinds, as on the real server: their own update validation checks the object
                # meta, and the generic registry checks it again.
                causes += [forbidden, forbidden] if res.builtin else [forbidden]
        causes += validation.labels_causes(meta.get("labels"), "metadata.labels")
        for key in meta.get("annotations") or {}:
            causes += validation.key_causes(key, "metadata.annotations")
        if res.builtin and not causes:
            causes += [] if schema_clean else validation.schema_causes(obj)
        if not causes:
            causes += validation.semantic_causes(res.key, obj)
        if old is not None and not causes:
            causes += self._immutable_causes(res, obj, old)
        if causes:
            raise errors.invalid(res, name, causes)

    def _immutable_causes(self, res, new, old) -> list[dict]:
        causes = []
        if res.key == "jobs.batch":
            old_spec, new_spec = old.get("spec") or {}, new.get("spec") or {}
            if new_spec.get("selector") != old_spec.get("selector"):
                causes.append(validation.cause("spec.selector", "Invalid value: field is immutable"))
            if new_spec.get("template") != old_spec.get("template") and not old_spec.get("suspend"):
                causes.append(validation.cause("spec.template", "Invalid value: field is immutable"))
            if new_spec.get("completions") != old_spec.get("completions"):
                causes.append(validation.cause("spec.completions", "Invalid value: field is immutable"))
        if res.key == "events" and eventsv1.THROUGH_V1.get():
            causes += [validation.cause(field, f"Invalid value: {json.dumps(new.get(field))}: field is immutable")
                       for field in eventsv1.IMMUTABLE_THROUGH_V1 if new.get(field) != old.get(field)]
        if res.key == "services":
            ip = (new.get("spec") or {}).get("clusterIP")
            if ip and ip != old["spec"].get("clusterIP"):
                causes.append(validation.cause("spec.clusterIPs[0]", f"Invalid value: {json.dumps([ip])}: may "
                                                                     "not change once set"))
        return causes

    # --- update and patch ------------------------------------------------------------------------------------

    def update(self, res, namespace, name, body, *, sub=None, dry_run=False, internal=False,
               manager: str | None = None, managed_fields: list | None = None) -> dict:
        cur = self.get(res, namespace, name)
        if not isinstance(body, dict) or not isinstance(body.get("metadata", {}), dict):
            raise bad_request("the body of the request is not a JSON object")
        meta_in = body.get("metadata") or {}
        if meta_in.get("name") not in (None, name):
            raise bad_request(f"the name of the object ({meta_in['name']}) does not match the name on the URL ({name})")
        schema_clean = False
        if res.builtin and not internal:
            schema_clean = validation.decode_check({**body, "apiVersion": res.api_version, "kind": res.kind})
        if meta_in.get("resourceVersion") not in (None, "", cur["metadata"]["resourceVersion"]):
            raise errors.conflict(res, name)
        if sub == "status":
            new = {**cur, "status": body.get("status"), "metadata": dict(cur["metadata"])}
        else:
            new = self._replacement(res, cur, body, name, internal=internal, schema_clean=schema_clean)
        if new.get("status") is None:
            new.pop("status", None)
        if managed_fields is not None:
            new["metadata"]["managedFields"] = managed_fields
        elif manager:
            managed.record_update(cur, new, manager=manager, api_version=res.api_version)
        if not new["metadata"].get("managedFields"):
            new["metadata"].pop("managedFields", None)
        if dry_run:
            return new
        return self._store_update(res, namespace, name, cur, new)

    def _replacement(self, res, cur, body, name, *, internal, schema_clean) -> dict:
        """The object an update writes (not its status): the body, with what the server keeps, defaulted,
        validated, addressed and its generation counted."""
        new = {**body, "apiVersion": res.api_version, "kind": res.kind}
        if res.status:
            new["status"] = cur.get("status")
        kept = {k: cur["metadata"][k] for k in ("uid", "creationTimestamp", "namespace", "deletionTimestamp",
                                                 "deletionGracePeriodSeconds", "generation", "managedFields")
                if k in cur["metadata"]}
        meta_in = body.get("metadata") or {}
        new["metadata"] = {**{k: v for k, v in meta_in.items() if k not in _SERVER_OWNED}, **kept, "name": name}
        if res.key in defaults.APPLY:  # before validation: immutability compares defaulted objects
            defaults.APPLY[res.key](new)
        if not internal:
            self._validate(res, new, name, create=False, old=cur, schema_clean=schema_clean)
        if res.key == "services":
            self.addresses.allocate(new, cur)
        if res.key in GENERATION and new.get("spec") != cur.get("spec"):
            new["metadata"]["generation"] = cur["metadata"].get("generation", 1) + 1
        return new

    def _store_update(self, res, namespace, name, cur, new) -> dict:
        if (new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers")
                and res.key not in ("pods", "namespaces")):  # those two wait for the kubelet / namespace controller
            return self.store.remove(res.key, namespace, name)
        new["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
        if new == cur:
            return cur  # a no-op write keeps its resourceVersion, as on the real server
        return self.store.update(res.key, new)

    def patch(self, res, namespace, name, raw: bytes, content_type: str, *, sub=None, query=None,
              manager: str | None = None) -> tuple[int, dict]:
        query = query or {}
        ctype = (content_type or "").split(";")[0].strip().lower()
        accepted = [JSON_PATCH, MERGE_PATCH] + ([STRATEGIC_PATCH] if res.builtin else []) + [APPLY_PATCH]
        if ctype not in accepted:
            raise errors.unsupported_media_type(ctype, accepted)
        try:
            body = yaml.safe_load(raw) if ctype == APPLY_PATCH else json.loads(raw or b"null")
        except (ValueError, yaml.YAMLError) as exc:
            raise bad_request(f"error decoding patch: {exc}") from None
        dry_run = query.get("dryRun") == "All"
        if ctype != APPLY_PATCH and "force" in query:
            raise errors.invalid_options("PatchOptions", [validation.cause(
                "force", "Forbidden: may not be specified for non-apply patch", "FieldValueForbidden")])
        if ctype == APPLY_PATCH:
            return self._apply_patch(res, namespace, name, body, query, sub=sub, dry_run=dry_run)
        cur = self.get(res, namespace, name)
        if ctype == JSON_PATCH:
            patched = patch.json_patch(cur, body)
        elif ctype == MERGE_PATCH:
            patched = patch.merge_patch(jcopy(cur), body) if isinstance(body, dict) else body
        else:
            patched = patch.strategic_merge(jcopy(cur), body) if isinstance(body, dict) else body
        if not isinstance(patched, dict):
            raise bad_request("the patched object is not a JSON object")
        rv = (patched.get("metadata") or {}).get("resourceVersion")
        if rv not in (None, cur["metadata"]["resourceVersion"]):
            raise errors.conflict(res, name)
        if sub == "scale":
            return 200, subresources.set_scale(self, res, namespace, name, patched, dry_run)
        return 200, self.update(res, namespace, name, patched, sub=sub, dry_run=dry_run, manager=manager)

    def _apply_patch(self, res, namespace, name, body, query: dict, *, sub, dry_run) -> tuple[int, dict]:
        """Server-side apply: the configuration merged over the live object by field ownership (managed.py)."""
        manager = query.get("fieldManager")
        if not manager:
            raise errors.invalid_options("PatchOptions", [validation.cause(
                "fieldManager", "Required value: is required for apply patch", "FieldValueRequired")])
        if not isinstance(body, dict):
            raise bad_request("error decoding YAML: the applied configuration is not an object")
        for field, expected in (("apiVersion", res.api_version), ("kind", res.kind)):
            if not body.get(field):
                raise bad_request(f"Object '{field[0].upper() + field[1:]}' is missing in '{json.dumps(body)}'")
            if body[field] != expected:
                raise bad_request(f"the {field} in the data ({body[field]}) does not match the expected {field} "
                                  f"({expected})")
        meta = body.get("metadata") if isinstance(body.get("metadata"), dict) else {}
        if meta.get("name") not in (None, name):
            raise bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL "
                              f"({name})")
        live = self.store.get(res.key, namespace if res.namespaced else None, name)
        force = query.get("force") in ("1", "t", "T", "TRUE", "true", "True")
        if live is None:
            if sub:
                raise errors.not_found(res, name)
            config = {**body, "metadata": {**meta, "name": name}}
            applied = managed.apply(None, config, manager=manager, api_version=res.api_version, force=force)
            fields = applied["metadata"].pop("managedFields")
            return 201, self.create(res, namespace, applied, dry_run=dry_run, managed_fields=fields)
        applied = managed.apply(live, body, manager=manager, api_version=res.api_version, force=force)
        fields = applied["metadata"]["managedFields"]
        return 200, self.update(res, namespace, name, applied, sub=sub, dry_run=dry_run, managed_fields=fields)

    # --- delete ----------------------------------------------------------------------------------------------

    def delete(self, res, namespace, name, options: dict | None = None) -> tuple[int, dict, list[str]]:
        """Returns (code, body, warnings). Objects with finalizers (incl. foreground/orphan propagation) and
        scheduled pods are marked with deletionTimestamp and finished by the controller."""
        options = options or {}
        cur = self.get(res, namespace, name)
        meta = cur["metadata"]
        _check_preconditions(res, name, meta, options.get("preconditions") or {})
        if res.key == "namespaces" and name in PROTECTED_NAMESPACES:
            raise errors.forbidden(res, name, f'namespaces "{name}" is forbidden: this namespace may not be deleted')
        policy, warnings = _propagation(res, name, options)
        if options.get("dryRun"):
            return 200, cur, warnings
        grace = self._grace_period(res, cur, options)
        if meta.get("deletionTimestamp"):
            if grace == 0 and res.key == "pods":
                return 200, self.store.remove(res.key, namespace, name), warnings
            return 200, cur, warnings
        finalizers = list(meta.get("finalizers") or [])
        extra = {"Foreground": "foregroundDeletion", "Orphan": "orphan"}.get(policy)
        if extra and extra not in finalizers:
            finalizers.append(extra)
        if finalizers or grace or res.key == "namespaces":
            return 200, self.store.update(res.key, _marked_deleted(res, cur, finalizers, grace)), warnings
        gone = self.store.remove(res.key, namespace, name)
        if res.key in RETURNS_DELETED_OBJECT:
            return 200, gone, warnings
        return 200, errors.success(res, name, meta["uid"]), warnings

    @staticmethod
    def _grace_period(res, obj, options) -> int | None:
        if res.key != "pods":
            return None
        if not (obj.get("spec") or {}).get("nodeName") or (obj.get("status") or {}).get("phase") in ("Succeeded",
                                                                                                       "Failed"):
            return 0  # never started or already finished: nothing to stop
        grace = options.get("gracePeriodSeconds")
        if grace is None:
            grace = obj["spec"].get("terminationGracePeriodSeconds", 30)
        return max(0, int(grace))

    def delete_collection(self, res, namespace, query: dict, options: dict) -> dict:
        listed = self.list(res, namespace, {k: v for k, v in query.items() if k in ("labelSelector", "fieldSelector")})
        deleted = []
        for item in listed["items"]:
            ns = item["metadata"].get("namespace")
            if self.store.get(res.key, ns, item["metadata"]["name"]) is not None:
                deleted.append(self.delete(res, ns, item["metadata"]["name"], options)[1])
        return {"kind": res.list_kind, "apiVersion": res.api_version,
                "metadata": {"resourceVersion": str(self.store.rv)}, "items": deleted}


def _page(res, source, labels, fields, limit) -> tuple[list, dict | None, int]:
    """The matching objects of a list page: (items, the last one's metadata, 1 where more match)."""
    items, last = [], None
    for obj in source:
        meta = obj["metadata"]
        if (labels and not match_labels(labels, meta.get("labels"))) or (fields and not match_fields(fields, obj)):
            continue
        if limit and len(items) == limit:
            return items, last, 1
        items.append(obj if not res.builtin else {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")})
        last = meta
    return items, last, 0


def _check_type(res, body) -> None:
    if not isinstance(body, dict):
        raise bad_request("the body of the request is not a JSON object")
    for field, expected in (("apiVersion", res.api_version), ("kind", res.kind)):
        if body.get(field) not in (None, "", expected):
            raise bad_request(f"the {field} in the data ({body[field]}) does not match the expected "
                              f"{field} ({expected})")


def _new_metadata(res, obj: dict, namespace) -> dict:
    """A new object's metadata, as the server takes it: no server-owned fields, its namespace, its name."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = obj["metadata"] = {}
    if meta.get("resourceVersion"):
        raise ApiError(500, "InternalError", "resourceVersion should not be set on objects to be created")
    for field in _SERVER_OWNED:
        meta.pop(field, None)
    if res.namespaced:
        if meta.get("namespace") not in (None, "", namespace):
            raise bad_request("the namespace of the provided object does not match the namespace sent on "
                              "the request")
        meta["namespace"] = namespace
    else:
        meta.pop("namespace", None)
    if not meta.get("name"):
        if not meta.get("generateName"):
            raise errors.invalid(res, "", [validation.cause("metadata.name", "Required value: name or "
                                                            "generateName is required", "FieldValueRequired")])
        meta["name"] = meta["generateName"] + random_suffix()
    return meta


def _server_fields(res, obj: dict, managed_fields: list | None, manager: str | None) -> None:
    """What the server sets on a new object: its initial status, generation and managed fields."""
    meta = obj["metadata"]
    if res.status:
        status = defaults.initial_status(res.key, obj)
        obj.pop("status", None)
        if status is not None:
            obj["status"] = status
    if res.key in GENERATION:
        meta["generation"] = 1
    if managed_fields is not None:
        meta["managedFields"] = managed_fields
    elif manager:
        managed.record_update(None, obj, manager=manager, api_version=res.api_version)


def _check_preconditions(res, name, meta: dict, pre: dict) -> None:
    if pre.get("uid") not in (None, meta["uid"]):
        raise errors.conflict(res, name, f"Precondition failed: UID in precondition: {pre['uid']}, UID in "
                                         f"object meta: {meta['uid']}")
    if pre.get("resourceVersion") not in (None, meta["resourceVersion"]):
        raise errors.conflict(res, name, f"Precondition failed: ResourceVersion in precondition: "
                                         f"{pre['resourceVersion']}, ResourceVersion in object meta: "
                                         f"{meta['resourceVersion']}")


def _propagation(res, name, options: dict) -> tuple[str | None, list[str]]:
    """A delete's propagation policy, and the warnings it gives."""
    policy, warnings = options.get("propagationPolicy"), []
    if policy is None and options.get("orphanDependents") is not None:
        policy = "Orphan" if options["orphanDependents"] else "Background"
    if policy is None and res.key == "jobs.batch":
        policy = "Orphan"  # batch/v1 keeps its historical default and says so
        warnings.append(JOB_DELETE_WARNING)
    if policy not in (None, "Background", "Foreground", "Orphan"):
        raise errors.invalid(res, name, [validation.cause("propagationPolicy", f'Unsupported value: "{policy}": '
                             'supported values: "Foreground", "Background", "Orphan", "nil"',
                             "FieldValueNotSupported")])
    return policy, warnings


def _marked_deleted(res, cur: dict, finalizers: list, grace) -> dict:
    new = {**cur, "metadata": {**cur["metadata"], "deletionTimestamp": now_rfc3339(time.time() + (grace or 0)),
                               "deletionGracePeriodSeconds": grace or 0}}
    if finalizers:
        new["metadata"]["finalizers"] = finalizers
    if res.key == "namespaces":
        new["status"] = {**(cur.get("status") or {}), "phase": "Terminating"}
    return new
