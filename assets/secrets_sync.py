"""Credentials made into Kubernetes Secrets, one cluster at a time: each credential's Secret in the namespace of
every project of the cluster it serves (assets/selectors.py `credentials_of_cluster`), made as
assets/secret_manifests.py says. One pass converges the cluster: a missing Secret is created (the project's
namespace first), one whose type or values differ is replaced or patched, and a Secret of ours that no credential
wants any more (the credential deleted, its project deleted or moved) is deleted. Idempotent: run it as often as
anything changes (assets/tasks.py). Secret values are never logged."""

import json
import logging
from dataclasses import dataclass, field

from assets.secret_manifests import CREDENTIAL_LABEL, PROJECT_LABEL, SELECTOR, credential_secret
from assets.selectors import credentials_of_cluster
from studio.clusters import kube
from studio.models import Cluster

log = logging.getLogger(__name__)
SECRET = ("v1", "Secret")


@dataclass
class Applied:
    created: list = field(default_factory=list)  # "namespace/name"
    updated: list = field(default_factory=list)
    deleted: list = field(default_factory=list)


def desired_secrets(cluster_id) -> dict[tuple[str, str], dict]:
    """{(namespace, name): manifest} of every credential Secret the cluster should hold."""
    wanted = {}
    for asset, projects in credentials_of_cluster(cluster_id):
        secret = json.loads(asset.secret) if asset.secret else {}
        for project in projects:
            manifest = credential_secret(asset_id=asset.pk, kind=asset.kind, spec=asset.spec, secret=secret,
                                         namespace=project.namespace, project=project.name)
            if manifest is not None:
                wanted[(project.namespace, manifest["metadata"]["name"])] = manifest
    return wanted


def _namespace_ensure(conn: kube.Connection, manifest: dict) -> None:
    namespace = manifest["metadata"]["namespace"]
    if not kube.namespace_recently_ensured(conn, namespace):
        kube.namespace_ensure(conn, namespace, labels={PROJECT_LABEL: manifest["metadata"]["labels"][PROJECT_LABEL]})


def _create(conn: kube.Connection, manifest: dict) -> tuple[dict, bool]:
    _namespace_ensure(conn, manifest)
    try:
        return kube.create_or_adopt(conn, manifest, owner_label=CREDENTIAL_LABEL)
    except kube.NotFound:  # the namespace was deleted since this process ensured it: again, once
        kube.namespace_forget(conn, manifest["metadata"]["namespace"])
        _namespace_ensure(conn, manifest)
        return kube.create_or_adopt(conn, manifest, owner_label=CREDENTIAL_LABEL)


def _same(live: dict, manifest: dict) -> bool:
    return (live.get("type") == manifest["type"] and (live.get("data") or {}) == manifest["data"]
            and all((live["metadata"].get("labels") or {}).get(k) == v
                    for k, v in manifest["metadata"]["labels"].items()))


def cluster_secrets_apply(cluster: Cluster) -> Applied:
    """Bring the cluster's credential Secrets in line with the credentials (see the module)."""
    conn = kube.connect(cluster)
    wanted = desired_secrets(cluster.pk)
    live = {(o["metadata"]["namespace"], o["metadata"]["name"]): o
            for o in kube.list_managed(conn, *SECRET, label_selector=SELECTOR)}
    done = Applied()
    for key, manifest in wanted.items():
        where = "/".join(key)
        found = live.get(key)
        if found is None:
            found, created = _create(conn, manifest)
            if created:
                done.created.append(where)
                continue
        if _same(found, manifest):
            continue
        if found.get("type") != manifest["type"]:  # a Secret's type cannot change: made anew
            kube.delete(conn, *SECRET, key[0], key[1])
            _create(conn, manifest)
        else:
            kube.patch(conn, *SECRET, key[0], key[1], {"metadata": {"labels": manifest["metadata"]["labels"]},
                                                       "data": {**{k: None for k in found.get("data") or {}
                                                                   if k not in manifest["data"]},
                                                                **manifest["data"]}})
        done.updated.append(where)
    for key in live.keys() - wanted.keys():
        if kube.delete(conn, *SECRET, key[0], key[1]):
            done.deleted.append("/".join(key))
    if done.created or done.updated or done.deleted:
        log.info("credential secrets of cluster %s: created %s, updated %s, deleted %s", cluster.name,
                 done.created, done.updated, done.deleted)
    return done
