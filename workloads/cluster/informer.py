"""What one cluster runs, kept current by watches: a store of the product's objects grouped by workload, and the
reflectors that fill it, as client-go's informers do.

A `Reflector` (one thread per kind, and per namespace where the account may only read inside its namespaces)
LISTs its kind once, then WATCHes from the list's resourceVersion with bookmarks; a watch that ends (its
timeout, a dropped connection, an outage) resumes from the last resourceVersion seen, so nothing is listed
again; one that is too old for the server (410 Expired) lists again and replaces what the store held of the
kind. An account that may list but not watch (RBAC of an older deploy/) is polled: a LIST every
SYNC_INTERVAL_SECONDS, compared with the store.

The `Store` keeps each object as the reflector trimmed it, to what the phases, endpoints and repairs read (no pod
specs, no secret data, no managed fields), and marks *dirty* each workload whose objects, pods or Warning events changed; the
watcher (`workloads.cluster.watcher`) takes the dirty ones and applies them.
"""

import logging
import random
import sys
import threading
import time
from collections import defaultdict
from collections.abc import Iterable

import orjson
import zstandard

from perf import kept_json
from perf.gc_pause import gc_paused
from perf.kept_json import ANY
from studio.clusters import kube
from studio.clusters import scheduler as sched
from workloads import manifests
from workloads.cluster import phases

log = logging.getLogger(__name__)
POD, EVENT, NAMESPACE = kube.POD, kube.EVENT, ("v1", "Namespace")
WARNING_SELECTOR = "type=Warning"
# KAI Scheduler's `Evict` events (Normal ones, on PodGroups): read from the Event API like the warnings, kept apart.
EVICTION = (*kube.EVENT, "Evict")
EVICTION_SELECTOR = "reason=Evict"
EVENT_KINDS = (EVENT, EVICTION)
NODE = ("v1", "Node")
WHOLE = (sched.QUEUE, sched.POD_GROUP)
BACKOFF_MAX_SECONDS = 30.0
REPLICA_SPECS = "ReplicaSpecs"


# --- trimming --------------------------------------------------------------------------------------------

KEPT_LABELS = (manifests.WORKLOAD_ID_LABEL, phases.REPLICA_TYPE_LABEL)
CONDITION_KEYS = ("type", "status", "reason", "message", "lastTransitionTime")
POD_CONDITIONS = ("PodScheduled", "Ready")  # the only ones phases and pending reasons read
# Of these kinds, only these spec fields are read (phases, the suspension repair); the rest of a spec goes.
SPEC_KEPT = {("batch/v1", "Job"): ("suspend",), ("apps/v1", "Deployment"): ("replicas",)}
CONTAINER_KEYS = ("name", "image", "state", "lastState", "restartCount", "ready")
POD_STATUS_KEYS = ("phase", "reason", "message", "hostIP", "startTime")


def _pick(obj, keys) -> dict:
    return {k: obj[k] for k in keys if k in obj} if isinstance(obj, dict) else {}


def _meta(meta: dict) -> dict:
    """What the sync reads of metadata: identity, times, our labels, whether a controller owns it."""
    out = _pick(meta, ("name", "namespace", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
                       "generation"))
    labels = meta.get("labels") or {}
    kept = {k: labels[k] for k in KEPT_LABELS if k in labels}
    if kept:
        out["labels"] = kept
    if any(isinstance(r, dict) and r.get("controller") for r in meta.get("ownerReferences") or ()):
        out["ownerReferences"] = [{"controller": True}]
    return out


def _pod_status(status) -> dict:
    if not isinstance(status, dict):
        return {}
    out = _pick(status, POD_STATUS_KEYS)
    conditions = [_pick(c, CONDITION_KEYS) for c in status.get("conditions") or ()
                  if isinstance(c, dict) and c.get("type") in POD_CONDITIONS]
    if conditions:
        out["conditions"] = conditions
    for key in ("initContainerStatuses", "containerStatuses"):
        if isinstance(status.get(key), list) and status[key]:
            out[key] = [{k: v for k, v in _pick(c, CONTAINER_KEYS).items() if v != {}} for c in status[key]]
    return out


def _status(status) -> dict:
    if not isinstance(status, dict):
        return status
    if isinstance(status.get("conditions"), list):
        return {**status, "conditions": [_pick(c, CONDITION_KEYS) for c in status["conditions"]]}
    return status


def _containers(items) -> list[dict]:
    return [{"name": c.get("name"), "image": c.get("image")} for c in items or () if isinstance(c, dict)]


def trim(kind: tuple[str, str], obj: dict) -> dict:
    """The object as much as the store's readers need (`phases`, `pending`, `endpoints`, the repairs), which at
    100,000 workloads is the difference between gigabytes and a few hundred megabytes: no managed fields or
    annotations, no pod specs but the node and the containers' images, no templates' pod specs, no Secret data.
    Kept objects are never changed after: readers share them without copying."""
    if kind in WHOLE:  # KAI's: read in full by kai_sync and the queues' sync (few of them, or one per workload)
        return {**obj, "metadata": {k: v for k, v in (obj.get("metadata") or {}).items() if k != "managedFields"}}
    if kind == NODE:  # the GPUs it offers (scheduler.gpu_capacity)
        allocatable = (obj.get("status") or {}).get("allocatable") or {}
        return {"apiVersion": "v1", "kind": "Node", "metadata": _pick(obj.get("metadata") or {}, ("name", "uid",
                "resourceVersion")), "status": {"allocatable": allocatable}}
    if kind in EVENT_KINDS:
        out = {"apiVersion": obj.get("apiVersion") or kind[0], "kind": obj.get("kind") or kind[1],
               "metadata": _pick(obj.get("metadata") or {}, ("name", "namespace", "uid", "resourceVersion",
                                                             "creationTimestamp"))}
        for key in ("involvedObject", "reason", "message", "type", "lastTimestamp", "eventTime"):
            if key in obj:
                out[key] = _pick(obj[key], ("kind", "name", "namespace", "uid")) if key == "involvedObject" \
                    else obj[key]
        return out
    out = {"apiVersion": obj.get("apiVersion") or kind[0], "kind": obj.get("kind") or kind[1],
           "metadata": _meta(obj.get("metadata") or {})}
    if kind[1] == "Secret":
        return out
    spec = obj.get("spec")
    if kind == POD:
        if isinstance(spec, dict):
            out["spec"] = {k: v for k, v in (("nodeName", spec.get("nodeName")),
                                             ("containers", _containers(spec.get("containers"))),
                                             ("initContainers", _containers(spec.get("initContainers")))) if v}
        out["status"] = _pod_status(obj.get("status"))
        return out
    if isinstance(spec, dict):
        out["spec"] = _pick(spec, SPEC_KEPT[kind]) if kind in SPEC_KEPT else _without_pod_specs(spec)
    if "status" in obj:
        out["status"] = _status(obj["status"])
    return out


def trim_kept(kind: tuple[str, str], obj: dict) -> dict:
    """`trim` of an object decoded keeping only the fields `trim` reads (`KEPT`: a LIST page or a watch event that
    `perf.kept_json` answered as `Kept`): the same result, its objects and lists reused rather than made again. Such
    an object holds no other field, and each of its objects and lists is of its shape's type or null, so what is left
    is what `trim` does beyond picking fields: defaults, empty values dropped, a pod's conditions chosen. Its fields
    in `trim`'s order, theirs in the cluster's (as a watch event's): a kind's objects are packed against its first
    one (`Packer`), and objects whose keys came in another order packed a third larger. A pod of the simulated
    cluster, decoded and trimmed: 43 → 31 µs; a Job 14 → 8 (docs/performance.md). Any other kind: `trim`."""
    if kind == POD:
        out = {"apiVersion": obj.get("apiVersion") or kind[0], "kind": obj.get("kind") or kind[1],
               "metadata": _kept_meta(obj.get("metadata"))}
        spec = obj.get("spec")
        if spec is not None:
            out["spec"] = {k: v for k, v in (("nodeName", spec.get("nodeName")),
                                             ("containers", _kept_containers(spec.get("containers"))),
                                             ("initContainers", _kept_containers(spec.get("initContainers")))) if v}
        out["status"] = _kept_pod_status(obj.get("status"))
        return out
    if kind in SPEC_KEPT:
        out = {"apiVersion": obj.get("apiVersion") or kind[0], "kind": obj.get("kind") or kind[1],
               "metadata": _kept_meta(obj.get("metadata"))}
        if obj.get("spec") is not None:
            out["spec"] = obj["spec"]
        if "status" in obj:
            out["status"] = _status(obj["status"])  # kept whole: its conditions' fields picked as `trim` does
        return out
    return trim(kind, obj)


def _kept_meta(meta: dict | None) -> dict:
    if not meta:
        return {}
    if not meta.get("labels", True):  # kept: only KEPT_LABELS; none of them there, or null
        del meta["labels"]
    owners = meta.pop("ownerReferences", None)
    if owners and any(owner and owner.get("controller") for owner in owners):
        meta["ownerReferences"] = [{"controller": True}]
    return meta


def _kept_containers(items: list | None) -> list[dict]:
    return [c if len(c) == 2 else {"name": c.get("name"), "image": c.get("image")} for c in items or ()
            if c is not None]


def _kept_pod_status(status: dict | None) -> dict:
    if status is None:
        return {}
    conditions = status.pop("conditions", None)
    if conditions:
        conditions = [c for c in conditions if c is not None and c.get("type") in POD_CONDITIONS]
        if conditions:
            status["conditions"] = conditions
    for key in ("initContainerStatuses", "containerStatuses"):
        items = status.pop(key, None)
        if items:
            status[key] = [_kept_container_status(c) for c in items]
    return status


def _kept_container_status(status: dict | None) -> dict:
    if not status:
        return {}
    for key in [k for k, v in status.items() if type(v) is dict and not v]:  # `v != {}`, without making a {} each
        del status[key]
    return status


def _without_pod_specs(spec: dict) -> dict:
    """A controller's spec with its pod template's spec dropped (its metadata stays: Knative's scale bounds are
    annotations there), in the template itself and in each replica spec of a Kubeflow job."""
    spec = dict(spec)
    if isinstance(spec.get("template"), dict):
        spec["template"] = {k: v for k, v in spec["template"].items() if k != "spec"}
    for key, replicas in list(spec.items()):
        if key.endswith(REPLICA_SPECS) and isinstance(replicas, dict):
            spec[key] = {role: {k: v for k, v in r.items() if k != "template"} if isinstance(r, dict) else r
                         for role, r in replicas.items()}
    return spec


# What `trim` reads of the kinds it trims field by field, as `perf.kept_json` shapes: a LIST page or a watch event
# of these kinds is decoded keeping only these fields, so the rest of an object (pod specs, managed fields,
# annotations: most of its text) is skipped without being built. trim(kind, kept) == trim(kind, whole) for every
# object (tests/workloads/test_kept_fields.py); a field trim reads and a shape drops fails it.

_META = {**dict.fromkeys(("name", "namespace", "uid", "resourceVersion", "creationTimestamp", "deletionTimestamp",
                          "generation"), ANY),
         "labels": dict.fromkeys(KEPT_LABELS, ANY), "ownerReferences": [{"controller": ANY}]}
_CONTAINER = {"name": ANY, "image": ANY}
_CONDITION = dict.fromkeys(CONDITION_KEYS, ANY)
_CONTAINER_STATUS = dict.fromkeys(CONTAINER_KEYS, ANY)
_EVENT = {"apiVersion": ANY, "kind": ANY,
          "metadata": dict.fromkeys(("name", "namespace", "uid", "resourceVersion", "creationTimestamp"), ANY),
          "involvedObject": dict.fromkeys(("kind", "name", "namespace", "uid"), ANY),
          **dict.fromkeys(("reason", "message", "type", "lastTimestamp", "eventTime"), ANY)}
KEPT = {
    POD: {"apiVersion": ANY, "kind": ANY, "metadata": _META,
          "spec": {"nodeName": ANY, "containers": [_CONTAINER], "initContainers": [_CONTAINER]},
          "status": {**dict.fromkeys(POD_STATUS_KEYS, ANY), "conditions": [_CONDITION],
                     "containerStatuses": [_CONTAINER_STATUS], "initContainerStatuses": [_CONTAINER_STATUS]}},
    **{kind: {"apiVersion": ANY, "kind": ANY, "metadata": _META, "spec": dict.fromkeys(fields, ANY), "status": ANY}
       for kind, fields in SPEC_KEPT.items()},
    **dict.fromkeys(EVENT_KINDS, _EVENT),
}
_decoders: dict = {}


def kept_decoders(kind: tuple) -> tuple:
    """(LIST page decoder, watch event decoder) keeping what `trim` reads of `kind`; (None, None) for a kind
    trimmed otherwise (kept whole, or everything but its pod templates)."""
    if kind not in _decoders:
        shape = KEPT.get(kind)
        _decoders[kind] = (kept_json.list_decoder(shape), kept_json.event_decoder(shape)) if shape else (None, None)
    return _decoders[kind]


# --- the store -------------------------------------------------------------------------------------------

# An object is kept under the key "namespace/name" ("/name" when cluster-scoped; neither part may hold a "/"): one
# string, where a tuple of two took 56 bytes more an object (the store at 100,000 workloads: 222 -> 205 MiB RSS in
# bench.store_memory, docs/performance.md).

def _key_of(namespace: str, name: str) -> str:
    return f"{namespace}/{name}"


def _key(obj: dict) -> str:
    meta = obj.get("metadata") or {}
    return _key_of(meta.get("namespace") or "", meta.get("name") or "")


def _namespace_of(key: str) -> str:
    return key.partition("/")[0]


def _pair(key: str) -> tuple[str, str]:
    """(namespace, name) of a key, as a round's readers look events up."""
    namespace, _, name = key.partition("/")
    return namespace, name


def _wid(obj: dict) -> str | None:
    return ((obj.get("metadata") or {}).get("labels") or {}).get(manifests.WORKLOAD_ID_LABEL) or None


def _event_key(event: dict) -> tuple[str, str]:
    """(the key of the object an event is about, the event's uid)."""
    involved = event.get("involvedObject") or {}
    namespace = involved.get("namespace") or (event.get("metadata") or {}).get("namespace") or ""
    return _key_of(namespace, involved.get("name") or ""), (event.get("metadata") or {}).get("uid") or ""


def _pairs(members: tuple):
    """A workload's (kind, key) pairs from its group."""
    return zip(members[::2], members[1::2], strict=True)


def _version(obj: dict) -> str:
    return (obj.get("metadata") or {}).get("resourceVersion") or ""


class Packer:
    """One kind's objects as the store keeps them: their compact JSON compressed with zstandard against the first
    object of the kind it packed (a raw-content dictionary). Objects of a kind share their keys and most values
    (a trimmed pod: 840 bytes of JSON, 70-80 bytes packed); packing one costs about 4 µs, unpacking 1-2 µs.

    `pack` is called under the store's lock; `unpack` from any thread (a decompressor per thread: zstandard's
    are not thread-safe)."""

    LEVEL = 1
    DICTIONARY_LIMIT = 16_384

    def __init__(self, first: bytes):
        self.lock = threading.Lock()  # the compressor's: reflectors of one kind in several namespaces pack at once
        self.dictionary = zstandard.ZstdCompressionDict(first[:self.DICTIONARY_LIMIT],
                                                        dict_type=zstandard.DICT_TYPE_RAWCONTENT)
        self.dictionary.precompute_compress(level=self.LEVEL)
        self.compressor = zstandard.ZstdCompressor(level=self.LEVEL, dict_data=self.dictionary,
                                                   write_checksum=False, write_content_size=True,
                                                   write_dict_id=False)
        self.local = threading.local()
        self.unpack(self.pack(first))  # the dictionary's decoding tables, made here rather than in two threads at once

    def pack(self, data: bytes) -> bytes:
        with self.lock:
            return self.compressor.compress(data)  # copied into the store's entry (`_entry`), of its exact size

    def pack_many(self, texts: list[bytes]):
        """`pack` of each text, in one call: zstandard lets the GIL go for each call, so two reflectors' threads
        listing at once handed it to each other after every object (about 10 µs of switching an object beside a
        busy thread, docs/performance.md). The same bytes as `pack`'s, each a buffer copied into its entry."""
        many = getattr(self.compressor, "multi_compress_to_buffer", None)  # the C backend's (not CFFI's)
        with self.lock:
            return many(texts, threads=0) if many is not None else [self.compressor.compress(t) for t in texts]

    def unpack(self, packed) -> dict:
        decompressor = getattr(self.local, "decompressor", None)
        if decompressor is None:
            decompressor = self.local.decompressor = zstandard.ZstdDecompressor(dict_data=self.dictionary)
        return orjson.loads(decompressor.decompress(packed))


# An object's entry in the store: (workload id or None, blob), the blob its resourceVersion (two bytes of length,
# then the text) followed by its packed JSON: one bytes object, not a tuple of three with a string of its own.
# An event is kept as its blob alone, under the object it is about and its uid.

def _blob(version: str, packed: bytes) -> bytes:
    text = version.encode()
    return len(text).to_bytes(2, "big") + text + packed


def _entry(wid: str | None, version: str, packed: bytes) -> tuple:
    return wid, _blob(version, packed)


def _blob_version(blob: bytes) -> str:
    return blob[2:2 + int.from_bytes(blob[:2], "big")].decode()


def _blob_packed(blob: bytes) -> memoryview:
    return memoryview(blob)[2 + int.from_bytes(blob[:2], "big"):]


def _entry_version(entry: tuple) -> str:
    return _blob_version(entry[1])


def _entry_packed(entry: tuple) -> memoryview:
    return _blob_packed(entry[1])


class Store:
    """A cluster's objects by kind, and which belong to each workload (by its id label); Warning events by the
    object they are about. Objects are kept packed (`Packer`: compact JSON, compressed against an object of their
    kind: a twentieth of the memory of the dicts; at 100,000 workloads a hundred megabytes, not gigabytes),
    decoded when a pass reads them. Events as well: a Warning event kept as a dict took 1.9 KB, and a burst of
    10,000 failed Jobs brought as many (docs/performance.md)."""

    def __init__(self, *, namespaces: Iterable[str] | None = None):
        self.lock = threading.Lock()
        self.items: dict = defaultdict(dict)  # kind -> key ("namespace/name") -> its entry (`_entry`)
        self.packers: dict[tuple, Packer] = {}  # kind -> its Packer, made with the first object of the kind
        self.groups: dict = {}  # wid -> (kind, key, kind, key, ...): its objects
        self.warnings: dict = defaultdict(dict)  # key of the object -> uid -> Warning event's blob
        self.evictions: dict = defaultdict(dict)  # key of the pod group -> uid -> KAI's Evict event's blob
        self.changed_kinds: set = set()  # kinds with a change since taken (`take_changed`)
        self.dirty: set[str] = set()
        self.changed = threading.Event()  # set when something became dirty
        self.namespaces = set(namespaces) if namespaces is not None else None  # events kept from these only

    # writers: the reflectors

    def pack(self, kind: tuple[str, str], obj: dict):
        """A trimmed object as `apply` and `replace` take it: an event as (the key of its object, its uid, whether
        it is kept (a Warning), its blob); any other object as (its key, its entry: (workload id, blob), `_entry`)."""
        data = orjson.dumps(obj)
        return self._packed(kind, obj, self._packer(kind, data).pack(data))

    def pack_page(self, kind: tuple[str, str], objects: list[dict]) -> list:
        """`pack` for a LIST page's trimmed objects, packed as the page arrives (a LIST of 100,000 pods held as dicts
        until the store took them was half a gigabyte) and compressed in one call (`Packer.pack_many`)."""
        if not objects:
            return []
        texts = [orjson.dumps(obj) for obj in objects]
        packed = self._packer(kind, texts[0]).pack_many(texts)
        return [self._packed(kind, obj, packed[i]) for i, obj in enumerate(objects)]

    def _packer(self, kind, data: bytes) -> Packer:
        packer = self.packers.get(kind)
        if packer is None:
            with self.lock:
                packer = self.packers.get(kind)
                if packer is None:
                    packer = self.packers[kind] = Packer(data)
        return packer

    def _packed(self, kind, obj: dict, packed) -> tuple:
        if kind in EVENT_KINDS:
            key, uid = _event_key(obj)
            kept = kind != EVENT or obj.get("type") in (None, "Warning")
            return key, uid, kept, _blob(_version(obj), packed)
        wid = _wid(obj)
        # The entry made here, in the reflector's thread: the compressor's result sits in a buffer of the input's
        # size, freed at once rather than held by a whole LIST's page until the store takes it.
        return _key(obj), _entry(sys.intern(wid) if wid else None, _version(obj), packed)

    def apply(self, kind: tuple[str, str], kind_of_event: str, item) -> None:
        """One watch event (ADDED, MODIFIED, DELETED) of `kind`, its object as `pack` made it."""
        with self.lock:
            self.changed_kinds.add(kind)
            if kind in EVENT_KINDS:
                self._event(kind, kind_of_event, item)
            elif kind_of_event == "DELETED":
                self._remove(kind, item[0])
            else:
                self._put(kind, item)
            self._wake()

    def replace(self, kind: tuple[str, str], namespace: str | None, objects: list) -> None:
        """What a LIST of `kind` (in `namespace`, or everywhere) found, each object as `pack` made it: objects
        gone are removed, changed ones put, unchanged ones (same resourceVersion) left as they are."""
        with self.lock:
            self.changed_kinds.add(kind)
            if kind in EVENT_KINDS:
                bucket = self._bucket(kind)
                fresh = {(item[0], item[1]): item for item in objects if item[1]}
                for key in [k for k in bucket if namespace is None or _namespace_of(k) == namespace]:
                    for uid in list(bucket[key]):
                        if (key, uid) not in fresh:
                            self._drop_event(kind, key, uid)
                for (key, uid), item in fresh.items():
                    old = bucket.get(key, {}).get(uid)
                    if old is None or _blob_version(old) != _blob_version(item[3]):
                        self._event(kind, "ADDED", item)
            else:
                current = {entry[0]: entry for entry in objects}
                for key in [k for k in self.items[kind] if namespace is None or _namespace_of(k) == namespace]:
                    if key not in current:
                        self._remove(kind, key)
                for key, entry in current.items():
                    old = self.items[kind].get(key)
                    version = _entry_version(entry[1])
                    if old is None or _entry_version(old) != version or not version:
                        self._put(kind, entry)
            self._wake()

    def forget_namespace(self, namespace: str) -> None:
        """Everything of a namespace no longer followed (namespaced reads: its reflectors stopped)."""
        with self.lock:
            for kind in list(self.items):
                for key in [k for k in self.items[kind] if _namespace_of(k) == namespace]:
                    self._remove(kind, key)
            for kind in EVENT_KINDS:
                bucket = self._bucket(kind)
                for key in [k for k in bucket if _namespace_of(k) == namespace]:
                    for uid in list(bucket[key]):
                        self._drop_event(kind, key, uid)
            self._wake()

    def set_namespaces(self, namespaces: Iterable[str]) -> None:
        with self.lock:
            self.namespaces = set(namespaces)

    def _put(self, kind, item: tuple) -> None:
        key, entry = item
        wid = entry[0]
        old = self.items[kind].get(key)
        if old is not None and old[0] != wid:
            self._remove(kind, key)
            old = None
        self.items[kind][key] = entry
        if wid:
            if old is None:
                self.groups[wid] = (*self.groups.get(wid, ()), kind, key)
            self.dirty.add(wid)

    def _remove(self, kind, key) -> None:
        old = self.items[kind].pop(key, None)
        if old is None or not old[0]:
            return
        wid = old[0]
        members = tuple(item for pair in _pairs(self.groups.get(wid, ())) if pair != (kind, key) for item in pair)
        if members:
            self.groups[wid] = members
        else:
            self.groups.pop(wid, None)
        self.dirty.add(wid)

    def _owners(self, key: str) -> set[str]:
        """The workloads whose objects are named `key` (an event's object): one lookup per kind."""
        return {entry[0] for found in self.items.values() if (entry := found.get(key)) and entry[0]}

    def _bucket(self, kind) -> dict:
        return self.evictions if kind == EVICTION else self.warnings

    def _event(self, kind, kind_of_event: str, item: tuple) -> None:
        """One event as `pack` made it: (the key of its object, uid, kept, blob)."""
        key, uid, kept, blob = item
        if not uid or (self.namespaces is not None and _namespace_of(key) not in self.namespaces):
            return
        if kind_of_event == "DELETED":
            self._drop_event(kind, key, uid)
        elif kept:
            self._bucket(kind)[key][uid] = blob
            self.dirty.update(self._owners(key))

    def _drop_event(self, kind, key: str, uid: str) -> None:
        bucket = self._bucket(kind)
        found = bucket.get(key)
        if found is None or found.pop(uid, None) is None:
            return
        if not found:
            del bucket[key]
        self.dirty.update(self._owners(key))

    def _wake(self) -> None:
        if self.dirty:
            self.changed.set()

    # readers: the watcher

    def take_dirty(self) -> set[str]:
        with self.lock:
            dirty, self.dirty = self.dirty, set()
            self.changed.clear()
            return dirty

    def mark(self, wids: Iterable[str]) -> None:
        with self.lock:
            self.dirty.update(wids)
            self._wake()

    def view(self, wids: Iterable[str] | None = None) -> tuple[dict, dict, dict, dict]:
        """(objects, pods, warnings, evictions) as a sync round groups them — wid -> kind -> [object],
        wid -> [pod], (namespace, name) -> [event] — for these workloads, or for every workload the store holds."""
        with self.lock:
            chosen = list(self.groups) if wids is None else [w for w in wids if w in self.groups]
            found = {wid: [(kind, key, _entry_packed(self.items[kind][key])) for kind, key in _pairs(self.groups[wid])]
                     for wid in chosen}
            keys = {key for members in found.values() for _, key, _ in members}
            warnings = {key: list(self.warnings[key].values()) for key in keys if key in self.warnings}
            evictions = {key: list(self.evictions[key].values()) for key in keys if key in self.evictions}
            packers = dict(self.packers)
        for events, kind in ((warnings, EVENT), (evictions, EVICTION)):
            for key, blobs in list(events.items()):
                del events[key]
                events[_pair(key)] = [packers[kind].unpack(_blob_packed(blob)) for blob in blobs]
        objects, pods = {}, {}
        for wid, members in found.items():  # decoded outside the lock: the reflectors go on meanwhile
            for kind, _, blob in members:
                if kind == POD:
                    pods.setdefault(wid, []).append(packers[kind].unpack(blob))
                else:
                    objects.setdefault(wid, {}).setdefault(kind, []).append(packers[kind].unpack(blob))
        return objects, pods, warnings, evictions

    def versions(self, wids: Iterable[str]) -> dict[str, bytes]:
        """wid -> what its objects are now, without decoding them: each object's key and resourceVersion, and the
        uid and resourceVersion of each Warning event about it, in one text (a checkpoint's fingerprint,
        `workloads.cluster.checkpoint`). Workloads with no object here are left out."""
        found = {}
        with self.lock:
            for wid in wids:
                members = self.groups.get(wid)
                if not members:
                    continue
                lines = []
                for kind, key in sorted(_pairs(members)):  # a resourceVersion names one state of one object
                    lines.append(f"{key} {_entry_version(self.items[kind][key])}")
                    events = self.warnings.get(key)
                    if events:
                        lines.extend(f"{uid} {_blob_version(blob)}" for uid, blob in sorted(events.items()))
                found[wid] = "\n".join(lines).encode()
        return found

    def every(self, kind: tuple[str, str]) -> list[dict]:
        """Every object of a kind (Queues, Nodes: those that belong to no workload)."""
        with self.lock:
            blobs = [_entry_packed(entry) for entry in self.items.get(kind, {}).values()]
            packer = self.packers.get(kind)
        return [packer.unpack(blob) for blob in blobs]

    def by_workload(self, kind: tuple[str, str]) -> dict:
        """wid -> [objects of this kind]: every workload's, whether a pass reads the workload or not."""
        with self.lock:
            blobs = [(entry[0], _entry_packed(entry)) for entry in self.items.get(kind, {}).values() if entry[0]]
            packer = self.packers.get(kind)
        found: dict = defaultdict(list)
        for wid, blob in blobs:
            found[wid].append(packer.unpack(blob))
        return found

    def workloads(self) -> set[str]:
        """The ids of the workloads the store holds objects of."""
        with self.lock:
            return set(self.groups)

    def take_changed(self) -> set:
        """The kinds that changed since the last call."""
        with self.lock:
            changed, self.changed_kinds = self.changed_kinds, set()
            return changed

    def namespaces_seen(self) -> set[str]:
        with self.lock:
            return {_pair(key)[1] for key in self.items.get(NAMESPACE, {})}

    def size(self) -> dict:
        with self.lock:
            return {"objects": sum(len(v) for k, v in self.items.items() if k != NAMESPACE),
                    "workloads": len(self.groups), "warnings": sum(len(v) for v in self.warnings.values()),
                    "bytes": sum(len(e[1]) for v in self.items.values() for e in v.values())}


# --- the reflectors --------------------------------------------------------------------------------------

class Reflector(threading.Thread):
    """LIST then WATCH one kind (in one namespace, or in all), into the store, until stopped."""

    def __init__(self, conn: kube.Connection, kind: tuple, store: Store, *, namespace: str | None = None,
                 label_selector: str = kube.MANAGED_BY_SELECTOR, field_selector: str = "",
                 watch_seconds: float = 300.0, poll_seconds: float = 5.0):
        """`kind`: what the store files the objects under; its first two items are the API's (apiVersion, kind)."""
        super().__init__(name=f"reflector {kind[1]} {namespace or '*'}", daemon=True)
        self.conn, self.kind, self.store, self.namespace = conn, kind, store, namespace
        self.api_kind = kind[:2]
        self.label_selector, self.field_selector = label_selector, field_selector
        self.watch_seconds, self.poll_seconds = watch_seconds, poll_seconds
        self.stopping = threading.Event()
        self.synced = threading.Event()  # the first LIST is in the store
        self.failing_since: float | None = None  # the cluster did not answer this reflector since then
        self.failure = ""
        self.forbidden = False  # the account may not read this kind here (403): nothing to follow, not an outage
        self.polling = False  # the account may list but not watch: a LIST every poll_seconds
        self.lists = self.watches = self.expired = 0
        self.resource_version: str | None = None
        self._response = None

    def stop(self) -> None:
        self.stopping.set()
        response = self._response
        if response is not None:
            try:
                response.shutdown()  # unblocks the read in the reflector's thread
            except Exception:  # noqa: BLE001 - already closed, or closing: either way it ends
                pass

    def run(self) -> None:
        backoff = 1.0
        while not self.stopping.is_set():
            try:
                if self.resource_version is None or self.polling:
                    self._list()
                if self.polling:
                    self.stopping.wait(self.poll_seconds)
                    continue
                self._watch()
                backoff = 1.0
            except kube.Expired:
                self.expired += 1
                log.info("watch of %s in %s: resourceVersion %s too old (410), listing again", self.kind[1],
                         self.namespace or "all namespaces", self.resource_version)
                self.resource_version = None
            except kube.PermanentClusterError as exc:
                if self.stopping.is_set():
                    return
                if exc.status == 403 and self.synced.is_set() and not self.polling and not self.forbidden:
                    log.warning("the account may list but not watch %s (add `watch` to its role, deploy/rbac.yaml):"
                                " polling every %.0f s", self.kind[1], self.poll_seconds)
                    self.polling = True
                    continue
                if exc.status == 403:
                    self.forbidden = True  # e.g. a namespace whose RoleBinding is not made yet
                    self.synced.set()
                    self._healthy()
                else:
                    self._failed(exc.message)
                self.stopping.wait(min(backoff * 4, 60.0))
                backoff = min(backoff * 2, BACKOFF_MAX_SECONDS)
            except (kube.ClusterError, *kube.TRANSIENT_ERRORS, ValueError) as exc:
                if self.stopping.is_set():
                    return
                self._failed(str(getattr(exc, "message", "") or exc) or type(exc).__name__)
                self.stopping.wait(backoff * (0.5 + random.random()))  # jitter: reflectors do not stampede
                backoff = min(backoff * 2, BACKOFF_MAX_SECONDS)

    def _list(self) -> None:
        began = time.monotonic()
        # The pages' JSON holds no cycles: with the collector running, its passes over the young objects (and, as
        # the store grows, the whole heap) took half the LIST's CPU (50,000 pods: 2.84 -> 1.57 s, docs/performance.md).
        with gc_paused():
            items, version = kube.list_snapshot(
                self.conn, *self.api_kind, namespace=self.namespace, label_selector=self.label_selector,
                field_selector=self.field_selector, kept=kept_decoders(self.kind)[0],
                each_page=lambda page, kept: self.store.pack_page(
                    self.kind, [(trim_kept if kept else trim)(self.kind, obj) for obj in page]))
        self.lists += 1
        self.forbidden = False
        self.store.replace(self.kind, self.namespace, items)
        self.resource_version = version
        log.debug("listed %d %s in %s in %.2f s", len(items), self.kind[1], self.namespace or "all namespaces",
                  time.monotonic() - began)
        self.synced.set()
        self._healthy()

    def _watch(self) -> None:
        # client-go's spread: each watch lasts between one and two timeouts, so that they do not end together.
        seconds = int(self.watch_seconds * (1 + random.random()))
        self.watches += 1
        events = kube.watch_stream(self.conn, *self.api_kind, resource_version=self.resource_version,
                                   namespace=self.namespace, label_selector=self.label_selector,
                                   field_selector=self.field_selector, timeout_seconds=seconds,
                                   on_response=self._opened, kept=kept_decoders(self.kind)[1])
        try:
            for event in events:
                if self.stopping.is_set():
                    return
                version = _version(event["object"])
                if event["type"] in ("ADDED", "MODIFIED", "DELETED"):
                    trimmed = (trim_kept if event["kept"] else trim)(self.kind, event["object"])
                    self.store.apply(self.kind, event["type"], self.store.pack(self.kind, trimmed))
                if version:
                    self.resource_version = version
        finally:
            self._response = None

    def _opened(self, response) -> None:
        self._response = response
        if self.stopping.is_set():
            response.shutdown()
        self._healthy()

    def _healthy(self) -> None:
        self.failing_since, self.failure = None, ""

    def _failed(self, message: str) -> None:
        if self.failing_since is None:
            self.failing_since = time.monotonic()
            log.warning("%s of %s: %s", "list" if self.resource_version is None else "watch", self.kind[1], message)
        self.failure = message
