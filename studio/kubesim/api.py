"""REST semantics of the simulated API server: create, get, list, update, patch and delete with the real
server's admission, defaulting, optimistic concurrency, generation, finalizers and deletion propagation.

The HTTP layer (server.py) and the controller both go through here, under the store lock.
"""

from __future__ import annotations

import base64
import binascii
import json
import random
import time
import uuid

import yaml

from . import defaults, errors, patch, validation
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
              "horizontalpodautoscalers.autoscaling", "ingresses.networking.k8s.io"}
PROTECTED_NAMESPACES = {"default", "kube-system", "kube-public"}
_SERVER_OWNED = ("uid", "creationTimestamp", "deletionTimestamp", "deletionGracePeriodSeconds", "generation",
                 "selfLink", "managedFields")
# Kubernetes' random suffix alphabet: no vowels (no words), no look-alike characters.
SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def random_suffix(n: int = 5) -> str:
    return "".join(random.choices(SUFFIX_ALPHABET, k=n))


def _encode_continue(rv: int, namespace: str, name: str) -> str:
    raw = json.dumps({"v": "meta.k8s.io/v1", "rv": rv, "start": f"{namespace}/{name}"})
    return base64.urlsafe_b64encode(raw.encode()).decode().rstrip("=")


def _decode_continue(token: str) -> tuple[int, tuple[str, str]]:
    try:
        data = json.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        namespace, _, name = data["start"].partition("/")
        return int(data["rv"]), (namespace, name)
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise bad_request("continue key is not valid: incorrect encoded start resourceVersion "
                          "(version meta.k8s.io/v1)") from None


class Api:
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
        labels = parse_labels(query.get("labelSelector"))
        fields = parse_fields(query.get("fieldSelector"), res.key)
        try:
            limit = int(query.get("limit") or 0)
        except ValueError:
            raise bad_request(f"invalid limit: {query.get('limit')}") from None
        list_rv, after = self.store.rv, ("", "")
        if query.get("continue"):
            # Continue tokens do not expire: later pages show the current state after the token's key.
            list_rv, after = _decode_continue(query["continue"])
        items, last, more = [], None, False
        for obj in self.store.iter(res.key, namespace, after):
            meta = obj["metadata"]
            if (labels and not match_labels(labels, meta.get("labels"))) or (fields and not match_fields(fields, obj)):
                continue
            if limit and len(items) == limit:
                more = True
                break
            items.append(obj if not res.builtin else {k: v for k, v in obj.items() if k not in ("kind", "apiVersion")})
            last = meta
        metadata = {"resourceVersion": str(list_rv)}
        if more:
            metadata["continue"] = _encode_continue(list_rv, last.get("namespace", ""), last["name"])
            if not labels and not fields:
                metadata["remainingItemCount"] = self._remaining(res, namespace, last)
        return {"kind": res.list_kind, "apiVersion": res.api_version, "metadata": metadata, "items": items}

    def _remaining(self, res, namespace, last: dict) -> int:
        last_ns = last.get("namespace", "")
        count = len(self.store.names(res.key, last_ns)) - self.store.names(res.key, last_ns).index(last["name"]) - 1
        if namespace is None:
            count += sum(self.store.count(res.key, ns) for ns in self.store.namespaces(res.key) if ns > last_ns)
        return count

    # --- create ----------------------------------------------------------------------------------------------

    def create(self, res, namespace, body, *, dry_run=False, internal=False) -> dict:
        if not isinstance(body, dict):
            raise bad_request("the body of the request is not a JSON object")
        for field, expected in (("apiVersion", res.api_version), ("kind", res.kind)):
            if body.get(field) not in (None, "", expected):
                raise bad_request(f"the {field} in the data ({body[field]}) does not match the expected "
                                  f"{field} ({expected})")
        obj = {"apiVersion": res.api_version, "kind": res.kind, **{k: v for k, v in body.items()
                                                                   if k not in ("apiVersion", "kind")}}
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
        name = meta["name"]
        if res.namespaced:
            self._check_namespace(res, namespace, name)
        meta["uid"] = str(uuid.uuid4())
        meta["creationTimestamp"] = now_rfc3339()
        if res.key in defaults.APPLY:  # defaulting precedes validation, as on the real server
            defaults.APPLY[res.key](obj)
        if not internal:
            self._validate(res, obj, name, create=True)
        if self.store.get(res.key, namespace if res.namespaced else None, name) is not None:
            raise errors.already_exists(res, name)
        if res.key == "services":
            self.addresses.allocate(obj, None)
        if res.status:
            status = defaults.initial_status(res.key, obj)
            obj.pop("status", None)
            if status is not None:
                obj["status"] = status
        if res.key in GENERATION:
            meta["generation"] = 1
        if dry_run:
            return obj
        return self.store.create(res.key, obj)

    def _check_namespace(self, res, namespace, name):
        ns = self.store.get("namespaces", None, namespace)
        if ns is None:
            raise errors.namespace_not_found(namespace)
        if ns["metadata"].get("deletionTimestamp"):
            raise errors.forbidden(res, name, f'{res.qualified} "{name}" is forbidden: unable to create new content '
                                              f"in namespace {namespace} because it is being terminated")

    def _validate(self, res, obj, name, *, create: bool, old: dict | None = None):
        meta = obj["metadata"]
        causes = validation.name_causes(res.key, name) if create else []
        causes += validation.labels_causes(meta.get("labels"), "metadata.labels")
        for key in meta.get("annotations") or {}:
            causes += validation.key_causes(key, "metadata.annotations")
        if res.builtin and not causes:
            causes += validation.schema_causes(obj)
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
        if res.key == "services":
            ip = (new.get("spec") or {}).get("clusterIP")
            if ip and ip != old["spec"].get("clusterIP"):
                causes.append(validation.cause("spec.clusterIPs[0]", f"Invalid value: {json.dumps([ip])}: may "
                                                                     "not change once set"))
        return causes

    # --- update and patch ------------------------------------------------------------------------------------

    def update(self, res, namespace, name, body, *, sub=None, dry_run=False, internal=False) -> dict:
        cur = self.get(res, namespace, name)
        if not isinstance(body, dict) or not isinstance(body.get("metadata", {}), dict):
            raise bad_request("the body of the request is not a JSON object")
        meta_in = body.get("metadata") or {}
        if meta_in.get("name") not in (None, name):
            raise bad_request(f"the name of the object ({meta_in['name']}) does not match the name on the URL ({name})")
        if meta_in.get("resourceVersion") not in (None, "", cur["metadata"]["resourceVersion"]):
            raise errors.conflict(res, name)
        if sub == "status":
            new = {**cur, "status": body.get("status"), "metadata": dict(cur["metadata"])}
        else:
            new = {**body, "apiVersion": res.api_version, "kind": res.kind}
            if res.status:
                new["status"] = cur.get("status")
            kept = {k: cur["metadata"][k] for k in ("uid", "creationTimestamp", "namespace", "deletionTimestamp",
                                                     "deletionGracePeriodSeconds", "generation")
                    if k in cur["metadata"]}
            new["metadata"] = {**{k: v for k, v in meta_in.items() if k not in _SERVER_OWNED}, **kept, "name": name}
            if res.key in defaults.APPLY:  # before validation: immutability compares defaulted objects
                defaults.APPLY[res.key](new)
            if not internal:
                self._validate(res, new, name, create=False, old=cur)
            if res.key == "services":
                self.addresses.allocate(new, cur)
            if res.key in GENERATION and new.get("spec") != cur.get("spec"):
                new["metadata"]["generation"] = cur["metadata"].get("generation", 1) + 1
        if new.get("status") is None:
            new.pop("status", None)
        if dry_run:
            return new
        if (new["metadata"].get("deletionTimestamp") and not new["metadata"].get("finalizers")
                and res.key not in ("pods", "namespaces")):  # those two wait for the kubelet / namespace controller
            return self.store.remove(res.key, namespace, name)
        new["metadata"]["resourceVersion"] = cur["metadata"]["resourceVersion"]
        if new == cur:
            return cur  # a no-op write keeps its resourceVersion, as on the real server
        return self.store.update(res.key, new)

    def patch(self, res, namespace, name, raw: bytes, content_type: str, *, sub=None, query=None) -> tuple[int, dict]:
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
        if ctype == APPLY_PATCH:
            # Server-side apply, approximated: create if absent, else merge (field ownership is not tracked).
            if not query.get("fieldManager"):
                raise bad_request("PatchOptions.meta.k8s.io \"\" is invalid: fieldManager: Required value: is "
                                  "required for apply patch")
            if self.store.get(res.key, namespace if res.namespaced else None, name) is None:
                body = body if isinstance(body, dict) else {}
                body.setdefault("metadata", {})["name"] = name
                return 201, self.create(res, namespace, body, dry_run=dry_run)
            ctype = MERGE_PATCH
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
            return 200, self._set_scale(res, namespace, name, patched, dry_run)
        return 200, self.update(res, namespace, name, patched, sub=sub, dry_run=dry_run)

    # --- scale subresource -----------------------------------------------------------------------------------

    def get_scale(self, res, namespace, name) -> dict:
        obj = self.get(res, namespace, name)
        selector = ",".join(f"{k}={v}" for k, v in ((obj["spec"].get("selector") or {}).get("matchLabels") or {}).items())
        meta = {k: obj["metadata"][k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")}
        return {"kind": "Scale", "apiVersion": "autoscaling/v1", "metadata": meta,
                "spec": {"replicas": obj["spec"].get("replicas", 1)},
                "status": {"replicas": (obj.get("status") or {}).get("replicas", 0), "selector": selector}}

    def update_scale(self, res, namespace, name, body, dry_run=False) -> dict:
        rv = ((body or {}).get("metadata") or {}).get("resourceVersion")
        if rv not in (None, "", self.get(res, namespace, name)["metadata"]["resourceVersion"]):
            raise errors.conflict(res, name)
        return self._set_scale(res, namespace, name, body, dry_run)

    def _set_scale(self, res, namespace, name, scale: dict, dry_run: bool) -> dict:
        replicas = ((scale or {}).get("spec") or {}).get("replicas")
        if not isinstance(replicas, int) or replicas < 0:
            raise errors.invalid(res, name, [validation.cause("spec.replicas", f"Invalid value: {json.dumps(replicas)}"
                                                                               ": must be greater than or equal to 0")])
        obj = jcopy(self.get(res, namespace, name))
        obj["spec"]["replicas"] = replicas
        if not dry_run:
            self.update(res, namespace, name, obj, internal=True)
        return self.get_scale(res, namespace, name)

    # --- delete ----------------------------------------------------------------------------------------------

    def delete(self, res, namespace, name, options: dict | None = None) -> tuple[int, dict, list[str]]:
        """Returns (code, body, warnings). Objects with finalizers (incl. foreground/orphan propagation) and
        scheduled pods are marked with deletionTimestamp and finished by the controller."""
        options = options or {}
        cur = self.get(res, namespace, name)
        meta = cur["metadata"]
        pre = options.get("preconditions") or {}
        if pre.get("uid") not in (None, meta["uid"]):
            raise errors.conflict(res, name, f"Precondition failed: UID in precondition: {pre['uid']}, UID in "
                                             f"object meta: {meta['uid']}")
        if pre.get("resourceVersion") not in (None, meta["resourceVersion"]):
            raise errors.conflict(res, name, f"Precondition failed: ResourceVersion in precondition: "
                                             f"{pre['resourceVersion']}, ResourceVersion in object meta: "
                                             f"{meta['resourceVersion']}")
        if res.key == "namespaces" and name in PROTECTED_NAMESPACES:
            raise errors.forbidden(res, name, f'namespaces "{name}" is forbidden: this namespace may not be deleted')
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
            new = {**cur, "metadata": {**meta, "deletionTimestamp": now_rfc3339(time.time() + (grace or 0)),
                                       "deletionGracePeriodSeconds": grace or 0}}
            if finalizers:
                new["metadata"]["finalizers"] = finalizers
            if res.key == "namespaces":
                new["status"] = {**(cur.get("status") or {}), "phase": "Terminating"}
            return 200, self.store.update(res.key, new), warnings
        gone = self.store.remove(res.key, namespace, name)
        if res.key in ("pods", "services"):
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
