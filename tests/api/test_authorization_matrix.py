"""Who may do what, route by route: every method of every route under /api/v1, /cfg and /streaming, as read
from the URL resolver, against the code each kind of caller must get (CONTRACT §1: 401 without credentials,
404 for what the caller may not see, 403 for what it may see but not change).

A route or method the resolver has and TABLE lacks fails, as does an entry for a route that is gone, so a
new endpoint cannot ship without saying who may call it. Each call aims at an object of project alpha
(tests/api/world.py) with a body that is valid for a caller who may make it, so that the code is about
authorization; each runs in a savepoint that is rolled back, so every caller finds the same world."""

import json
import re

import pytest
from django.db import transaction
from django.urls import URLResolver, get_resolver
from rest_framework.test import APIClient

from studio.iam.auth import issue_token
from tests.api.world import IDP_BODY, REGISTRY_BODY, path_values
from tests.assets.bodies import KIND_OF, NO_CONTENT_ON_DELETE, body

ROLES = ("anonymous", "viewer", "member", "project_admin", "outsider", "platform_admin")
PREFIXES = ("/api/v1/", "/cfg/", "/streaming/", "/v1/")  # /v1/k8s/audit: Run:ai 2.18's Audit
SKIPPED_METHODS = {"OPTIONS", "HEAD", "TRACE"}  # answered by the framework alike for every route


def _refused_unless(*, member=None, project_admin=None, platform_admin, outsider=404):
    """A write to an object of alpha: 401 anonymous, 403 to whoever in alpha lacks the role, `outsider` for a
    caller outside alpha (404: it may not see the object)."""
    return (401, 403, member or 403, project_admin or member or 403, outsider, platform_admin)


def _platform_admins(ok=200):
    """Platform admins only, for something every signed-in caller may see."""
    return (401, 403, 403, 403, 403, ok)


READ_ALL = (401, 200, 200, 200, 200, 200)  # any signed-in caller, scoped to what it may see
READ_ALPHA = (401, 200, 200, 200, 404, 200)  # an object of alpha
OWN_KEY = (401, 404, 200, 404, 404, 404)  # bob's access key: nobody else's, platform admins included
CREATE_ANY = (401, 201, 201, 201, 201, 201)
# A platform admin may delete alpha, its department and its cluster, but they are in use: 409, not 204.
IN_USE = 409

ASSETS = "/api/v1/asset/"
def _asset_codes(path: str) -> dict:
    """Alpha's asset of kind `path`: its admin (an Editor) manages it, and so does bob, an L1 researcher, but for
    credentials (Run:ai's L1 manages environments, compute and data sources); erin (beta) may not see it, nor name
    alpha in a new one (400). Alpha's password is in use by alpha's Secret data source: 409 for those who may delete
    it."""
    gone = IN_USE if path == "credentials/password" else 204 if path in NO_CONTENT_ON_DELETE else 202
    secret = path.startswith("credentials/")
    return {
        ("GET", ASSETS + path): READ_ALL,
        ("POST", ASSETS + path): (401, 403, 403 if secret else 202, 202, 400, 202),
        ("GET", f"{ASSETS}{path}/{{AssetId}}"): READ_ALPHA,
        ("PUT", f"{ASSETS}{path}/{{AssetId}}"): _refused_unless(member=None if secret else 202, project_admin=202,
                                                                platform_admin=202),
        ("DELETE", f"{ASSETS}{path}/{{AssetId}}"): _refused_unless(member=None if secret else gone,
                                                                   project_admin=gone, platform_admin=gone)}


WORKLOAD_TEMPLATES = "/api/v1/workload-templates"
TEMPLATE_PLURALS = ("workspaces", "trainings", "distributed", "inferences")
# Templates (assets/template_api.py): alpha's admin and bob (an L1 researcher) manage alpha's; erin may not see
# them, nor name alpha in a new one (400).
TEMPLATE_TABLE = {
    ("GET", ASSETS + "workload-template"): READ_ALL,
    ("POST", ASSETS + "workload-template"): (401, 403, 202, 202, 400, 202),
    ("GET", ASSETS + "workload-template/{AssetId}"): READ_ALPHA,
    ("PUT", ASSETS + "workload-template/{AssetId}"): _refused_unless(member=202, platform_admin=202),
    ("DELETE", ASSETS + "workload-template/{AssetId}"): _refused_unless(member=202, platform_admin=202),
    ("GET", WORKLOAD_TEMPLATES): READ_ALL,
    ("GET", WORKLOAD_TEMPLATES + "/count"): READ_ALL,
    ("GET", WORKLOAD_TEMPLATES + "/name-availability"): (401, 204, 204, 204, 204, 204),
    ("GET", WORKLOAD_TEMPLATES + "/{templateId}"): READ_ALPHA,
    **{key: codes for plural in TEMPLATE_PLURALS for key, codes in {
        ("GET", f"{WORKLOAD_TEMPLATES}/{plural}"): READ_ALL,
        ("POST", f"{WORKLOAD_TEMPLATES}/{plural}"): (401, 403, 202, 202, 400, 202),
        ("GET", f"{WORKLOAD_TEMPLATES}/{plural}/{{templateId}}"): READ_ALPHA,
        ("DELETE", f"{WORKLOAD_TEMPLATES}/{plural}/{{templateId}}"): _refused_unless(member=204, platform_admin=204),
        **({} if plural == "inferences" else {
            (method, f"{WORKLOAD_TEMPLATES}/{plural}/{{templateId}}"): _refused_unless(member=200, platform_admin=200)
            for method in ("PUT", "PATCH")}),
    }.items()},
}

ASSET_TABLE = {
    **{("GET", ASSETS + family): READ_ALL for family in ("datasource", "credentials")},
    ("GET", ASSETS + "datasource/pvc/{AssetId}/history"): READ_ALPHA,
    **{key: codes for path in KIND_OF for key, codes in _asset_codes(path).items()},
    # Registries (assets/registry_api.py): managed as the admin-level roles' assets; alpha's registry answers
    # nothing (port 9), so that its repositories and tags are a 503 to those who may read it.
    ("GET", ASSETS + "registries"): READ_ALL,
    ("POST", ASSETS + "registries"): (401, 403, 403, 201, 400, 201),
    ("GET", ASSETS + "registries/{AssetId}"): READ_ALPHA,
    ("PUT", ASSETS + "registries/{AssetId}"): _refused_unless(project_admin=200, platform_admin=200),
    ("DELETE", ASSETS + "registries/{AssetId}"): _refused_unless(project_admin=204, platform_admin=204),
    ("GET", ASSETS + "registries/{AssetId}/repositories"): (401, 503, 503, 503, 404, 503),
    ("GET", ASSETS + "registries/{AssetId}/repositories/tags"): (401, 503, 503, 503, 404, 503),
}

TABLE = {
    # identity and organisation (CONTRACT §2)
    ("POST", "/api/v1/token"): (200, 200, 200, 200, 200, 200),  # bob's password grant, whoever sends it
    ("POST", "/api/v1/token/revoke"): (401, 204, 204, 204, 204, 204),
    ("GET", "/api/v1/me"): READ_ALL,
    ("GET", "/api/v1/clusters"): READ_ALL,
    ("POST", "/api/v1/clusters"): _platform_admins(201),
    ("GET", "/api/v1/clusters/{clusterId}"): READ_ALL,  # beta runs on the same cluster
    ("PUT", "/api/v1/clusters/{clusterId}"): _refused_unless(platform_admin=204, outsider=403),  # 2.18: 204
    ("PATCH", "/api/v1/clusters/{clusterId}"): _refused_unless(platform_admin=200, outsider=403),
    ("DELETE", "/api/v1/clusters/{clusterId}"): _refused_unless(platform_admin=IN_USE, outsider=403),
    ("GET", "/api/v1/org-unit/departments"): READ_ALL,
    ("GET", "/api/v1/org-unit/departments/count"): READ_ALL,
    ("GET", "/api/v1/org-unit/departments/telemetry"): READ_ALL,
    ("GET", "/api/v1/org-unit/departments/{departmentId}/metrics"): READ_ALL,  # beta is in the same department
    ("POST", "/api/v1/org-unit/departments"): _platform_admins(201),
    ("GET", "/api/v1/org-unit/departments/{departmentId}"): READ_ALL,  # beta is in the same department
    ("PUT", "/api/v1/org-unit/departments/{departmentId}"): _refused_unless(platform_admin=200, outsider=403),
    ("PATCH", "/api/v1/org-unit/departments/{departmentId}"): _refused_unless(platform_admin=200, outsider=403),
    ("DELETE", "/api/v1/org-unit/departments/{departmentId}"): _refused_unless(platform_admin=IN_USE, outsider=403),
    ("GET", "/api/v1/org-unit/projects"): READ_ALL,
    ("GET", "/api/v1/org-unit/projects/count"): READ_ALL,
    ("GET", "/api/v1/org-unit/projects/telemetry"): READ_ALL,  # over the projects the caller sees
    ("GET", "/api/v1/org-unit/projects/{projectId}/metrics"): READ_ALPHA,
    ("POST", "/api/v1/org-unit/projects"): _platform_admins(201),
    ("GET", "/api/v1/org-unit/projects/{projectId}"): READ_ALPHA,
    ("PUT", "/api/v1/org-unit/projects/{projectId}"): _refused_unless(platform_admin=200),
    ("PATCH", "/api/v1/org-unit/projects/{projectId}"): _refused_unless(platform_admin=200),
    ("DELETE", "/api/v1/org-unit/projects/{projectId}"): _refused_unless(platform_admin=IN_USE),
    ("GET", "/api/v1/org-unit/projects/{projectId}/members"): READ_ALPHA,
    ("POST", "/api/v1/org-unit/projects/{projectId}/members"): _refused_unless(project_admin=201, platform_admin=201),
    ("GET", "/api/v1/org-unit/projects/{projectId}/members/{userId}"): READ_ALPHA,
    ("PUT", "/api/v1/org-unit/projects/{projectId}/members/{userId}"):
        _refused_unless(project_admin=200, platform_admin=200),
    ("PATCH", "/api/v1/org-unit/projects/{projectId}/members/{userId}"):
        _refused_unless(project_admin=200, platform_admin=200),
    ("DELETE", "/api/v1/org-unit/projects/{projectId}/members/{userId}"):
        _refused_unless(project_admin=204, platform_admin=204),
    ("GET", "/api/v1/access-keys"): READ_ALL,
    ("POST", "/api/v1/access-keys"): CREATE_ANY,
    ("GET", "/api/v1/access-keys/{id}"): OWN_KEY,
    ("DELETE", "/api/v1/access-keys/{id}"): (401, 404, 204, 404, 404, 404),
    # Run:ai's Roles, Access rules and Users tags: a project's admins grant and revoke roles on it
    ("GET", "/api/v1/authorization/roles"): READ_ALL,
    ("GET", "/api/v1/authorization/roles/{roleIdPath}"): READ_ALL,
    ("GET", "/api/v1/authorization/access-rules"): READ_ALL,
    ("POST", "/api/v1/authorization/access-rules"):
        _refused_unless(project_admin=201, platform_admin=201, outsider=403),
    ("GET", "/api/v1/authorization/access-rules/count"): READ_ALL,
    ("GET", "/api/v1/authorization/access-rules/{accessRuleId}"): READ_ALPHA,
    ("DELETE", "/api/v1/authorization/access-rules/{accessRuleId}"):
        _refused_unless(project_admin=204, platform_admin=204),
    ("PUT", "/api/v1/org-unit/projects/{projectId}/resources"): _platform_admins(),
    ("PATCH", "/api/v1/org-unit/projects/{projectId}/resources"): _platform_admins(),
    ("PUT", "/api/v1/org-unit/departments/{departmentId}/resources"): _platform_admins(),
    ("PATCH", "/api/v1/org-unit/departments/{departmentId}/resources"): _platform_admins(),
    ("GET", "/api/v1/node-pools"): READ_ALL,
    ("POST", "/api/v1/node-pools"): _platform_admins(201),
    ("GET", "/api/v1/node-pools/count"): READ_ALL,
    ("GET", "/api/v1/node-pools/{nodepoolId}"): READ_ALL,  # beta runs on the same cluster
    ("DELETE", "/api/v1/node-pools/{nodepoolId}"): _platform_admins(204),
    ("PUT", "/api/v1/node-pools/{nodepoolId}"): _platform_admins(200),
    ("PATCH", "/api/v1/node-pools/{nodepoolId}"): _platform_admins(200),
    # Run:ai 2.18's node pools of a cluster: the same pools and rules, 2.18's codes
    ("GET", "/v1/k8s/clusters/{clusterId}/node-pools"): READ_ALL,  # beta runs on the same cluster
    ("POST", "/v1/k8s/clusters/{clusterId}/node-pools"): _platform_admins(201),
    ("PUT", "/v1/k8s/clusters/{clusterId}/node-pools/{id}"): _platform_admins(202),
    ("DELETE", "/v1/k8s/clusters/{clusterId}/node-pools/{id}"): _platform_admins(202),
    ("PUT", "/v1/k8s/clusters/{clusterId}/node-pools/{id}/labels"): _platform_admins(202),
    # Nodes are read live from the cluster; alpha's cluster is not reachable here, so past authorization: 503
    ("GET", "/api/v1/clusters/{clusterUuid}/nodes"): (401, 503, 503, 503, 503, 503),
    ("GET", "/api/v1/nodes"): (401, 503, 503, 503, 503, 503),  # every cluster the caller sees: alpha's
    ("GET", "/api/v1/nodes/count"): (401, 503, 503, 503, 503, 503),
    ("GET", "/api/v1/nodes/telemetry"): (401, 503, 503, 503, 503, 503),
    # a pool's metrics come from the rows (not the cluster): whoever sees its cluster
    ("GET", "/api/v1/clusters/{clusterUuid}/nodepools/{nodepoolName}/metrics"): READ_ALL,
    ("GET", "/api/v1/users"): _platform_admins(),
    ("POST", "/api/v1/users"): _platform_admins(201),
    ("GET", "/api/v1/users/count"): _platform_admins(),
    ("GET", "/api/v1/users/{userId}"): _platform_admins(),
    ("DELETE", "/api/v1/users/{userId}"): _platform_admins(204),
    ("POST", "/api/v1/users/{userId}/password"): _platform_admins(),
    # single sign-on (studio/iam): the world's provider cannot be reached (port 9 of loopback), so a platform
    # admin's update is the 400 naming its discovery URL; a second provider is a 409 (one at a time)
    ("GET", "/api/v1/idps"): _platform_admins(),
    ("POST", "/api/v1/idps"): _platform_admins(409),
    ("GET", "/api/v1/idps/{idp}"): _platform_admins(),
    ("PUT", "/api/v1/idps/{idp}"): _platform_admins(400),
    ("DELETE", "/api/v1/idps/{idp}"): _platform_admins(),
    ("GET", "/api/v1/idps/{idp}/mappers"): _platform_admins(),
    ("PUT", "/api/v1/idps/{idp}/mappers"): _platform_admins(202),
    ("GET", "/api/v1/service-accounts"): _platform_admins(),
    ("POST", "/api/v1/service-accounts"): _platform_admins(201),
    ("GET", "/api/v1/service-accounts/{serviceAccountId}"): _platform_admins(),
    ("PATCH", "/api/v1/service-accounts/{serviceAccountId}"): _platform_admins(),
    ("DELETE", "/api/v1/service-accounts/{serviceAccountId}"): _platform_admins(204),
    ("POST", "/api/v1/service-accounts/{serviceAccountId}/secret"): _platform_admins(),
    ("POST", "/api/v1/me/password"): (401, 200, 200, 200, 200, 200),
    ("GET", "/api/v1/audit-events"): _platform_admins(),
    ("GET", "/api/v1/audit-events/{id}"): _platform_admins(),
    # Run:ai's audit logs (studio/audit_logs.py): latest's AuditLogs and 2.18's Audit
    ("GET", "/api/v1/audit/log"): _platform_admins(),
    ("GET", "/api/v1/audit/log/file"): _platform_admins(),
    ("GET", "/v1/k8s/audit"): _platform_admins(),
    # workloads (CONTRACT §3); a project in the body that the caller is not in is a 400 naming projectId
    ("POST", "/api/v1/workloads/trainings"): (401, 403, 200, 200, 400, 200),
    ("GET", "/api/v1/workloads/trainings/{workloadId}"): READ_ALPHA,
    ("DELETE", "/api/v1/workloads/trainings/{workloadId}"): _refused_unless(member=204, platform_admin=204),
    ("POST", "/api/v1/workloads/trainings/{workloadId}/suspend"): _refused_unless(member=202, platform_admin=202),
    ("POST", "/api/v1/workloads/trainings/{workloadId}/resume"): _refused_unless(member=202, platform_admin=202),
    ("POST", "/api/v1/workloads/distributed"): (401, 403, 200, 200, 400, 200),
    ("GET", "/api/v1/workloads/distributed/{workloadId}"): READ_ALPHA,
    ("DELETE", "/api/v1/workloads/distributed/{workloadId}"): _refused_unless(member=204, platform_admin=204),
    ("POST", "/api/v1/workloads/distributed/{workloadId}/suspend"): _refused_unless(member=202, platform_admin=202),
    ("POST", "/api/v1/workloads/distributed/{workloadId}/resume"): _refused_unless(member=202, platform_admin=202),
    ("POST", "/api/v1/workloads/workspaces"): (401, 403, 200, 200, 400, 200),
    ("GET", "/api/v1/workloads/workspaces/{workloadId}"): READ_ALPHA,
    ("DELETE", "/api/v1/workloads/workspaces/{workloadId}"): _refused_unless(member=204, platform_admin=204),
    ("POST", "/api/v1/workloads/workspaces/{workloadId}/suspend"): _refused_unless(member=202, platform_admin=202),
    ("POST", "/api/v1/workloads/workspaces/{workloadId}/resume"): _refused_unless(member=202, platform_admin=202),
    ("POST", "/api/v1/workloads/inferences"): (401, 403, 200, 200, 400, 200),
    ("GET", "/api/v1/workloads/inferences/{workloadId}"): READ_ALPHA,
    ("DELETE", "/api/v1/workloads/inferences/{workloadId}"): _refused_unless(member=204, platform_admin=204),
    # An inference cannot be suspended: past authorization, the answer is a 400 that says so.
    ("POST", "/api/v1/workloads/inferences/{workloadId}/suspend"): _refused_unless(member=400, platform_admin=400),
    ("POST", "/api/v1/workloads/inferences/{workloadId}/resume"): _refused_unless(member=400, platform_admin=400),
    ("GET", "/api/v1/workloads/inferences/{workloadId}/metrics"): READ_ALPHA,
    ("GET", "/api/v1/workloads/inferences/{workloadId}/pods/{podId}/metrics"): READ_ALPHA,
    # Run:ai latest's update of an inference: a new revision (202), for whoever may change alpha's workloads
    ("PATCH", "/api/v1/workloads/inferences/{workloadId}"): _refused_unless(member=202, platform_admin=202),
    ("GET", "/api/v1/workloads"): READ_ALL,
    ("GET", "/api/v1/workloads/count"): READ_ALL,
    ("GET", "/api/v1/workloads/pods"): READ_ALL,  # the pods of the workloads the caller sees
    ("GET", "/api/v1/workloads/pods/count"): READ_ALL,
    ("GET", "/api/v1/workloads/telemetry"): READ_ALL,  # over the workloads the caller sees
    ("GET", "/api/v1/workloads/{workloadId}/history"): READ_ALPHA,
    ("GET", "/api/v1/workloads/{workloadId}"): READ_ALPHA,
    ("GET", "/api/v1/workloads/{workloadId}/events"): READ_ALPHA,
    ("GET", "/api/v1/workloads/{workloadId}/metrics"): READ_ALPHA,
    ("GET", "/api/v1/workloads/{workloadId}/outputs"): READ_ALPHA,
    ("GET", "/api/v1/workloads/{workloadId}/upgrade"): READ_ALPHA,
    # not launched from a profile: nothing to upgrade to (400), after the role check (403) and visibility (404)
    ("POST", "/api/v1/workloads/{workloadId}/upgrade"): _refused_unless(member=400, platform_admin=400),
    ("GET", "/api/v1/workloads/{workloadId}/pods"): READ_ALPHA,
    ("GET", "/api/v1/workloads/{workloadId}/pods/{podId}/metrics"): READ_ALPHA,
    # Logs, as on Run:ai: every role of alpha (a viewer's View covers them) and platform admins; the pod's cluster
    # is not reachable here, so past authorization: 503.
    ("GET", "/api/v1/workloads/{workloadId}/pods/{podId}/logs"): (401, 503, 503, 503, 404, 503),
    # environment templates, service profiles, catalog (CONTRACT §4)
    ("GET", "/api/v1/environment-templates"): READ_ALL,
    ("POST", "/api/v1/environment-templates"): _platform_admins(201),
    ("GET", "/api/v1/environment-templates/{id}"): READ_ALPHA,
    ("PUT", "/api/v1/environment-templates/{id}"): _refused_unless(platform_admin=200),
    ("PATCH", "/api/v1/environment-templates/{id}"): _refused_unless(platform_admin=200),
    ("DELETE", "/api/v1/environment-templates/{id}"): _refused_unless(platform_admin=204),
    ("PUT", "/api/v1/environment-templates/{id}/sharing"): _refused_unless(platform_admin=200),
    ("GET", "/api/v1/environment-templates/{templateId}/versions"): READ_ALPHA,
    ("POST", "/api/v1/environment-templates/{templateId}/versions"): _refused_unless(platform_admin=201),
    ("GET", "/api/v1/environment-templates/{templateId}/versions/{version}"): READ_ALPHA,
    ("PUT", "/api/v1/environment-templates/{templateId}/versions/{version}"): _refused_unless(platform_admin=200),
    ("PATCH", "/api/v1/environment-templates/{templateId}/versions/{version}"): _refused_unless(platform_admin=200),
    ("DELETE", "/api/v1/environment-templates/{templateId}/versions/{version}"): _refused_unless(platform_admin=204),
    ("GET", "/api/v1/service-profiles"): READ_ALL,
    ("POST", "/api/v1/service-profiles"): _platform_admins(201),
    ("GET", "/api/v1/service-profiles/{id}"): READ_ALPHA,
    ("PUT", "/api/v1/service-profiles/{id}"): _refused_unless(platform_admin=200),
    ("PATCH", "/api/v1/service-profiles/{id}"): _refused_unless(platform_admin=200),
    ("DELETE", "/api/v1/service-profiles/{id}"): _refused_unless(platform_admin=204),
    ("POST", "/api/v1/service-profiles/{id}/clone"): _refused_unless(platform_admin=201),
    ("PUT", "/api/v1/service-profiles/{id}/sharing"): _refused_unless(platform_admin=200),
    ("POST", "/api/v1/service-profiles/{id}/launch"): _refused_unless(member=201, platform_admin=201),
    ("GET", "/api/v1/catalog"): READ_ALPHA,
    ("GET", "/api/v1/catalog/{id}"): READ_ALPHA,
    # Kit App Streaming (CONTRACT §5): apps and versions are readable by all, written by platform admins
    ("GET", "/cfg/apps"): READ_ALL,
    ("POST", "/cfg/apps"): _platform_admins(201),
    ("GET", "/cfg/apps/{app_id}"): READ_ALL,
    ("PUT", "/cfg/apps/{app_id}"): _platform_admins(),
    ("DELETE", "/cfg/apps/{app_id}"): _platform_admins(204),
    ("GET", "/cfg/apps/{app_id}/versions"): READ_ALL,
    ("POST", "/cfg/apps/{app_id}/versions"): _platform_admins(201),
    ("DELETE", "/cfg/apps/{app_id}/versions"): _platform_admins(204),
    ("GET", "/cfg/apps/{app_id}/versions/{version}"): READ_ALL,
    ("GET", "/cfg/apps/{app_id}/versions/{version}/profiles"): READ_ALL,  # each sees the profiles it may
    ("GET", "/cfg/apps/{app_id}/versions/{version}/profiles/{profile_id}"): READ_ALPHA,
    ("GET", "/cfg/profiles"): READ_ALL,
    ("POST", "/cfg/profiles"): _platform_admins(201),
    ("GET", "/cfg/profiles/{profile_id}"): READ_ALPHA,
    ("PUT", "/cfg/profiles/{profile_id}"): _refused_unless(platform_admin=200),
    ("PATCH", "/cfg/profiles/{profile_id}"): _refused_unless(platform_admin=200),
    ("DELETE", "/cfg/profiles/{profile_id}"): _refused_unless(platform_admin=204),
    ("PATCH", "/cfg/apps/{app_id}"): _platform_admins(),
    ("GET", "/streaming/stream"): READ_ALL,
    # a project the caller is not in: 422 naming projectId (Kit's validation status)
    ("POST", "/streaming/stream"): (401, 403, 202, 202, 422, 202),
    ("DELETE", "/streaming/stream"): _refused_unless(member=204, platform_admin=204),
    ("GET", "/streaming/stream/{session_id}"): (401, 202, 202, 202, 404, 202),  # 202: it is starting
    ("DELETE", "/streaming/stream/{session_id}"): _refused_unless(member=204, platform_admin=204),
    # Kit's own additions: client URLs (bob's, of alpha: his, alpha's admins' and platform admins'), a project's cap
    # The researchers' CLI (studio/cli_api.py): handed to anyone, signed in or not — it is what one signs in with.
    **{("GET", f"/api/v1/{base}/{tail}"): (200, 200, 200, 200, 200, 200) for base in ("cli-exposer", "cli")
       for tail in ("installer/unix", "installer/mac", "installer/linux", "installer/unix/commands",
                    "installer/mac/commands", "installer/linux/commands", "installer/windows/commands",
                    "dist/{operatingSystem}/{architecture}/runai", "docs/{documentName}")},
    # Its single sign-on (studio/cli_device.py): public too; the poll without a device code is a 400 (invalid_request).
    ("POST", "/api/v1/cli/device"): (200, 200, 200, 200, 200, 200),
    ("POST", "/api/v1/cli/device/token"): (400, 400, 400, 400, 400, 400),
    ("GET", "/api/v1/kit/client-urls"): READ_ALL,
    ("POST", "/api/v1/kit/client-urls"): (401, 403, 201, 201, 400, 201),
    ("GET", "/api/v1/kit/client-urls/{clientUrlId}"): (401, 404, 200, 200, 404, 200),
    ("DELETE", "/api/v1/kit/client-urls/{clientUrlId}"): (401, 404, 204, 204, 404, 204),
    ("GET", "/api/v1/kit/projects/{projectId}/stream-limit"): READ_ALPHA,
    ("PUT", "/api/v1/kit/projects/{projectId}/stream-limit"): _refused_unless(project_admin=200, platform_admin=200),
    # Run:ai's workload assets (assets/access.py): alpha's asset of each kind (_asset_codes).
    **ASSET_TABLE,
    **TEMPLATE_TABLE,
    # Run:ai's data volumes (assets/datavolumes.py): alpha's, managed as a PVC data source of alpha (its admin, bob
    # an L1 researcher); erin (beta) may not see it until it is shared, nor name alpha in a new one (400).
    ("GET", "/api/v1/datavolumes"): READ_ALL,
    ("POST", "/api/v1/datavolumes"): (401, 403, 201, 201, 400, 201),
    ("GET", "/api/v1/datavolumes/count"): READ_ALL,
    ("GET", "/api/v1/datavolumes/name-availability"): (401, 204, 204, 204, 204, 204),
    ("GET", "/api/v1/datavolumes/{datavolumeId}"): READ_ALPHA,
    ("PATCH", "/api/v1/datavolumes/{datavolumeId}"): _refused_unless(member=200, platform_admin=200),
    ("DELETE", "/api/v1/datavolumes/{datavolumeId}"): _refused_unless(member=202, platform_admin=202),
    **{key: codes for tail in ("sharedScopes", "shared-scopes") for key, codes in (  # runapy's spelling too
        (("GET", f"/api/v1/datavolumes/{{datavolumeId}}/{tail}"), READ_ALPHA),
        (("PATCH", f"/api/v1/datavolumes/{{datavolumeId}}/{tail}"), _refused_unless(member=200, platform_admin=200)))},
    # Storage classes, read from the cluster of whoever sees it (the world's cluster does not answer: 503), and
    # their configuration (assets/storage_classes.py): read by those who see the cluster, written by platform admins.
    **{("GET", path): (401, 503, 503, 503, 503, 503) for path in (
        "/api/v1/storage-classes", "/v1/k8s/clusters/{uuid}/storage-classes")},
    ("GET", "/api/v1/storage-class-configuration"): READ_ALL,
    ("POST", "/api/v1/storage-class-configuration"): _platform_admins(201),
    ("GET", "/api/v1/storage-class-configuration/{id}"): READ_ALL,
    ("PUT", "/api/v1/storage-class-configuration/{id}"): _platform_admins(),
    ("PATCH", "/api/v1/storage-class-configuration/{id}"): _platform_admins(),
    ("DELETE", "/api/v1/storage-class-configuration/{id}"): _platform_admins(204),
    # Run:ai's Reports (usage/api.py): platform admins; availability says to each caller whether it may use them
    ("GET", "/api/v1/org-unit/reports"): _platform_admins(),
    ("POST", "/api/v1/org-unit/reports"): _platform_admins(202),
    ("GET", "/api/v1/org-unit/reports/count"): _platform_admins(),
    ("GET", "/api/v1/org-unit/reports/availability"): READ_ALL,
    ("GET", "/api/v1/org-unit/reports/{reportId}"): _platform_admins(),
    ("DELETE", "/api/v1/org-unit/reports/{reportId}"): _platform_admins(204),
    ("GET", "/api/v1/org-unit/reports/{reportId}/file"): _platform_admins(),
    # chargeback prices per node pool (PaaS Studio's own): platform admins only
    ("GET", "/api/v1/chargeback/prices"): _platform_admins(),
    ("GET", "/api/v1/chargeback/prices/{nodepoolId}"): _platform_admins(),
    ("PUT", "/api/v1/chargeback/prices/{nodepoolId}"): _platform_admins(),
    ("DELETE", "/api/v1/chargeback/prices/{nodepoolId}"): _platform_admins(204),
    # Run:ai latest's Notification tags (notifications/api.py): the types, the state and the channels' names for
    # every signed-in user; channels' configuration and the state's switches for platform admins; each user's own
    # subscriptions and in-portal notifications (bob's: nobody else's, platform admins included).
    ("GET", "/api/v1/notification-types"): READ_ALL,
    ("GET", "/api/v1/notification-state"): READ_ALL,
    ("PATCH", "/api/v1/notification-state"): _platform_admins(),
    ("GET", "/api/v1/notification-channels"): READ_ALL,
    ("POST", "/api/v1/notification-channels"): _platform_admins(),
    # Slack's API cannot be reached here (tests/settings.py): past authorization, a 503
    ("POST", "/api/v1/notification-channels/slack/create-app"): _platform_admins(503),
    ("GET", "/api/v1/notification-channels/{name}"): _platform_admins(),
    ("PUT", "/api/v1/notification-channels/{name}"): _platform_admins(),
    ("PATCH", "/api/v1/notification-channels/{name}"): _platform_admins(),
    ("DELETE", "/api/v1/notification-channels/{name}"): _platform_admins(204),
    ("POST", "/api/v1/validate-notification-channel"): _platform_admins(),  # 200 false: no SMTP server on port 9
    ("GET", "/api/v1/subscriptions"): READ_ALL,
    ("POST", "/api/v1/subscriptions"): (401, 200, 200, 200, 200, 200),
    ("PUT", "/api/v1/subscriptions/{id}"): OWN_KEY,
    ("DELETE", "/api/v1/subscriptions/{id}"): (401, 404, 204, 404, 404, 404),
    ("GET", "/api/v1/notifications"): READ_ALL,
    ("GET", "/api/v1/notifications/count"): READ_ALL,
    ("PATCH", "/api/v1/notifications/{id}"): OWN_KEY,
}

# A type the cluster's metrics API serves (no Prometheus here, so a GPU type would be a 207).
METRICS_QUERY = "?metricType=CPU_USAGE_CORES&start=2026-01-01T00:00:00Z&end=2026-01-01T01:00:00Z"
ORG_METRICS_QUERY = "?metricType=GPU_ALLOCATION&start=2026-01-01T00:00:00Z&end=2026-01-01T01:00:00Z"
AUDIT_SPAN = "?start=2000-01-01T00:00:00Z&end=2100-01-01T00:00:00Z"
QUERIES = {
    "/api/v1/asset/registries/{AssetId}/repositories/tags": lambda w: "?repository=team/trainer",
    "/api/v1/workload-templates/name-availability": lambda w: "?templateName=free&scopeType=tenant",
    "/api/v1/datavolumes": lambda w: "?requestType=Originated",
    "/api/v1/datavolumes/count": lambda w: "?requestType=Originated",
    "/api/v1/datavolumes/name-availability": lambda w: f"?dataName=free&clusterId={w.org.cluster.pk}",
    "/api/v1/storage-classes": lambda w: f"?clusterId={w.org.cluster.pk}",
    "/api/v1/audit/log": lambda w: AUDIT_SPAN,
    "/api/v1/audit/log/file": lambda w: AUDIT_SPAN,
    "/api/v1/catalog": lambda w: f"?projectId={w.org.a.pk}",
    "/api/v1/catalog/{id}": lambda w: f"?projectId={w.org.a.pk}",
    "/api/v1/workloads/inferences/{workloadId}/metrics": lambda w: METRICS_QUERY,
    "/api/v1/workloads/inferences/{workloadId}/pods/{podId}/metrics": lambda w: METRICS_QUERY,
    "/api/v1/workloads/{workloadId}/metrics": lambda w: METRICS_QUERY,
    "/api/v1/workloads/{workloadId}/pods/{podId}/metrics": lambda w: METRICS_QUERY,
    "/api/v1/org-unit/projects/{projectId}/metrics": lambda w: ORG_METRICS_QUERY,
    "/api/v1/org-unit/departments/{departmentId}/metrics": lambda w: ORG_METRICS_QUERY,
    "/api/v1/org-unit/projects/telemetry": lambda w: "?telemetryType=GPU_ALLOCATION",
    "/api/v1/workloads/telemetry": lambda w: "?telemetryType=WORKLOADS_COUNT",
    "/api/v1/org-unit/departments/telemetry": lambda w: "?telemetryType=GPU_QUOTA",
    "/api/v1/nodes/telemetry": lambda w: "?telemetryType=TOTAL_GPUS",
    "/api/v1/clusters/{clusterUuid}/nodepools/{nodepoolName}/metrics": lambda w: ORG_METRICS_QUERY,
}


def _workload(w, name: str) -> dict:
    return {"name": name, "projectId": w.org.a.pk, "clusterId": str(w.org.cluster.pk),
            "spec": {"image": "python:3.11"}}


def _project(w) -> dict:
    return {"name": "alpha", "departmentId": w.org.department.pk, "clusterId": str(w.org.cluster.pk),
            "resources": {"gpu": {"deserved": 2, "limit": 8}}}


def _version(w) -> dict:
    v = w.version
    return {"version": v.version, "kind": v.kind, "specTemplate": v.spec_template, "variables": v.variables,
            "outputs": v.outputs, "state": v.state}


def _service_profile(w) -> dict:
    return {"name": "alpha-service", "environmentTemplate": w.profile.template_version.template.name,
            "environmentTemplateVersion": w.profile.template_version.version, "serviceType": "jobs"}


def _email_channel(w) -> dict:
    return {"type": "email", "config": {"smtpHost": "127.0.0.1", "smtpPort": 9, "from": "studio@example.com",
                                        "authType": "auth_none"}}


def _subscription(w) -> dict:
    return {"events": [{"category": "Workload status change", "types": ["Failed"]}], "channels": [w.channel.name]}


BODIES = {
    ("PATCH", "/api/v1/notification-state"): lambda w: {"email": {"enabled": True}},
    ("POST", "/api/v1/notification-channels"): lambda w: {"type": "webhook", "name": "new-hook", "config": {
        "url": "http://127.0.0.1:9/hook", "secret": "0123456789abcdef"}},
    ("POST", "/api/v1/notification-channels/slack/create-app"): lambda w: {"accessToken": "xoxe-config-token"},
    ("PUT", "/api/v1/notification-channels/{name}"): _email_channel,
    ("PATCH", "/api/v1/notification-channels/{name}"): lambda w: {"config": {"smtpPort": 2525}},
    ("POST", "/api/v1/validate-notification-channel"): _email_channel,
    ("POST", "/api/v1/subscriptions"): _subscription,
    ("PUT", "/api/v1/subscriptions/{id}"): _subscription,
    ("PATCH", "/api/v1/notifications/{id}"): lambda w: {"read": True},
    ("POST", "/api/v1/token"): lambda w: {"grantType": "password", "username": "bob", "password": "pw-for-tests-1"},
    ("POST", "/api/v1/clusters"): lambda w: {"name": "second", "apiServerUrl": "https://kube.example.com:6443"},
    ("PUT", "/api/v1/clusters/{clusterId}"): lambda w: {"name": "main", "apiServerUrl": "http://127.0.0.1:1"},
    ("PATCH", "/api/v1/clusters/{clusterId}"): lambda w: {"verifyTls": False},
    ("POST", "/api/v1/org-unit/departments"): lambda w: {"name": "physics"},
    ("PUT", "/api/v1/org-unit/departments/{departmentId}"): lambda w: {"name": "research", "description": "Research."},
    ("PATCH", "/api/v1/org-unit/departments/{departmentId}"): lambda w: {"description": "Research."},
    ("POST", "/api/v1/org-unit/projects"): lambda w: {**_project(w), "name": "gamma"},
    ("PUT", "/api/v1/org-unit/projects/{projectId}"): _project,
    ("PATCH", "/api/v1/org-unit/projects/{projectId}"): lambda w: {"resources": {"gpu": {"deserved": 2, "limit": 8}}},
    ("POST", "/api/v1/org-unit/projects/{projectId}/members"): lambda w: {"userId": w.erin.pk, "role": "viewer"},
    ("PUT", "/api/v1/org-unit/projects/{projectId}/members/{userId}"): lambda w: {"role": "viewer"},
    ("PATCH", "/api/v1/org-unit/projects/{projectId}/members/{userId}"): lambda w: {"role": "viewer"},
    ("POST", "/api/v1/access-keys"): lambda w: {"name": "ci"},
    ("POST", "/api/v1/authorization/access-rules"): lambda w: {
        "subjectId": "carol", "subjectType": "user", "roleId": w.role.pk, "scopeId": str(w.org.a.pk),
        "scopeType": "project"},
    ("POST", "/api/v1/users"): lambda w: {"email": "new.user@example.com"},
    ("POST", "/api/v1/idps"): lambda w: IDP_BODY,
    ("PUT", "/api/v1/idps/{idp}"): lambda w: IDP_BODY,
    ("PUT", "/api/v1/idps/{idp}/mappers"): lambda w: {"groups": "roles"},
    ("POST", "/api/v1/service-accounts"): lambda w: {"name": "ci-two"},
    ("PATCH", "/api/v1/service-accounts/{serviceAccountId}"): lambda w: {"enabled": False},
    **{(method, f"/api/v1/org-unit/{unit}/resources"): lambda w: [
        {"nodePool": {"id": str(w.node_pool.pk)}, "gpu": {"deserved": 1, "limit": 2}}]
       for method in ("PUT", "PATCH") for unit in ("projects/{projectId}", "departments/{departmentId}")},
    ("POST", "/api/v1/node-pools"): lambda w: {"name": "h100", "labelKey": "run.ai/node-pool", "labelValue": "h100",
                                               "clusterId": str(w.org.cluster.pk)},
    **{(method, "/api/v1/node-pools/{nodepoolId}"): lambda w: {"labelKey": "run.ai/node-pool", "labelValue": "h200"}
       for method in ("PUT", "PATCH")},
    ("POST", "/v1/k8s/clusters/{clusterId}/node-pools"): lambda w: {"name": "h100", "labelKey": "run.ai/node-pool",
                                                                      "labelValue": "h100"},
    **{("PUT", f"/v1/k8s/clusters/{{clusterId}}/node-pools/{{id}}{tail}"): lambda w: {
        "labelKey": "run.ai/node-pool", "labelValue": "h200"} for tail in ("", "/labels")},
    ("POST", "/api/v1/me/password"): lambda w: {"currentPassword": "pw-for-tests-1", "newPassword": "another-pw-22"},
    ("POST", "/api/v1/workloads/trainings"): lambda w: _workload(w, "new-training"),
    ("POST", "/api/v1/workloads/workspaces"): lambda w: _workload(w, "new-workspace"),
    ("POST", "/api/v1/workloads/inferences"): lambda w: _workload(w, "new-inference"),
    ("POST", "/api/v1/workloads/distributed"): lambda w: {
        **_workload(w, "new-distributed"), "spec": {"image": "python:3.11", "distributedFramework": "PyTorch"}},
    ("PATCH", "/api/v1/workloads/inferences/{workloadId}"): lambda w: {"spec": {"image": "python:3.12"}},
    ("POST", "/api/v1/environment-templates"): lambda w: {"name": "new-template"},
    ("PUT", "/api/v1/environment-templates/{id}"): lambda w: {"name": "alpha-template", "description": "Alpha's."},
    ("PATCH", "/api/v1/environment-templates/{id}"): lambda w: {"description": "Alpha's."},
    ("PUT", "/api/v1/environment-templates/{id}/sharing"): lambda w: {"mode": "all"},
    ("POST", "/api/v1/environment-templates/{templateId}/versions"):
        lambda w: {**_version(w), "version": "1.1.0", "state": "draft"},
    ("PUT", "/api/v1/environment-templates/{templateId}/versions/{version}"): _version,
    ("PATCH", "/api/v1/environment-templates/{templateId}/versions/{version}"): lambda w: {"state": "disabled"},
    ("POST", "/api/v1/service-profiles"): lambda w: {**_service_profile(w), "name": "new-service"},
    ("PUT", "/api/v1/service-profiles/{id}"): _service_profile,
    ("PATCH", "/api/v1/service-profiles/{id}"): lambda w: {"description": "Alpha's."},
    ("POST", "/api/v1/service-profiles/{id}/clone"): lambda w: {"name": "alpha-copy"},
    ("PUT", "/api/v1/service-profiles/{id}/sharing"): lambda w: {"mode": "all"},
    ("POST", "/api/v1/service-profiles/{id}/launch"): lambda w: {"projectId": w.org.a.pk, "name": "launched"},
    ("POST", "/cfg/apps"): lambda w: {"id": "composer", "name": "USD Composer"},
    ("PUT", "/cfg/apps/{app_id}"): lambda w: {"name": "USD Viewer"},
    ("POST", "/cfg/apps/{app_id}/versions"):
        lambda w: {"version": "1.1.0", "container": "nvcr.io/nvidia/omniverse/usd-viewer", "container_version": "1.1.0"},
    ("DELETE", "/cfg/apps/{app_id}/versions"): lambda w: {"version": "1.0.0"},
    ("POST", "/cfg/profiles"):
        lambda w: {"id": "new-stream", "name": "New", "supportedApplications": [{"name": "*", "versions": ["*"]}]},
    ("PUT", "/cfg/profiles/{profile_id}"): lambda w: {"name": "Alpha streaming"},
    ("PATCH", "/cfg/profiles/{profile_id}"): lambda w: {"name": "Alpha streaming"},
    ("PATCH", "/cfg/apps/{app_id}"): lambda w: {"name": "USD Viewer"},
    ("POST", "/api/v1/kit/client-urls"): lambda w: {"projectId": w.org.a.pk, "name": "viewer"},
    ("PUT", "/api/v1/kit/projects/{projectId}/stream-limit"): lambda w: {"maxSessions": 3},
    ("POST", "/api/v1/org-unit/reports"): lambda w: {"name": "january", "start": "2026-01-01T00:00:00Z",
                                                     "end": "2026-02-01T00:00:00Z", "groupBy": "Project"},
    ("PUT", "/api/v1/chargeback/prices/{nodepoolId}"): lambda w: {"gpuHour": 2.5},
    ("POST", "/api/v1/datavolumes"): lambda w: {"name": "new-volume", "projectId": str(w.org.a.pk),
                                                "originPvcName": "out"},
    ("PATCH", "/api/v1/datavolumes/{datavolumeId}"): lambda w: {"description": "Alpha's results."},
    **{("PATCH", f"/api/v1/datavolumes/{{datavolumeId}}/{tail}"): lambda w: {
        "add": [{"scopeType": "department", "scopeId": str(w.org.department.pk)}]}
       for tail in ("sharedScopes", "shared-scopes")},
    ("POST", "/api/v1/storage-class-configuration"): lambda w: {"scopeType": "cluster",
                                                                "scopeId": str(w.org.cluster.pk), "name": "fast"},
    **{(method, "/api/v1/storage-class-configuration/{id}"): lambda w: {"permissions": {"allowedForAssets": True}}
       for method in ("PUT", "PATCH")},
    ("POST", "/streaming/stream"): lambda w: {"id": "usd-viewer", "profile": "alpha-stream", "projectId": w.org.a.pk},
    ("DELETE", "/streaming/stream"): lambda w: {"id": str(w.stream.pk)},
    **{("POST", ASSETS + path): (lambda w, path=path: body(path, "new-asset", project=w.org.a,
                                                           credential_id=str(w.assets["password"].pk)))
       for path in KIND_OF},
    **{("PUT", f"{ASSETS}{path}/{{AssetId}}"): (lambda w, kind=kind: {"meta": {"name": f"alpha-{kind.lower()}"}})
       for path, kind in KIND_OF.items()},
    ("POST", ASSETS + "registries"): lambda w: {**REGISTRY_BODY(w.org), "meta": {
        **REGISTRY_BODY(w.org)["meta"], "name": "new-registry"}},
    ("PUT", ASSETS + "registries/{AssetId}"): lambda w: {"meta": {"name": "alpha-registry"}},
    ("POST", ASSETS + "workload-template"): lambda w: {
        "meta": {"name": "new-template", "scope": "project", "projectId": w.org.a.pk},
        "spec": {"assets": {"environment": str(w.workload_templates["environment"].pk)}}},
    ("PUT", ASSETS + "workload-template/{AssetId}"): lambda w: {
        "meta": {"name": "alpha-asset-template"},
        "spec": {"assets": {"environment": str(w.workload_templates["environment"].pk)}}},
    **{("POST", f"{WORKLOAD_TEMPLATES}/{plural}"): lambda w: {
        "meta": {"name": "new-template", "scopeType": "project", "scopeId": str(w.org.a.pk)},
        "spec": {"image": "python:3.12"}} for plural in TEMPLATE_PLURALS},
    **{("PUT", f"{WORKLOAD_TEMPLATES}/{plural}/{{templateId}}"): lambda w: {
        "meta": {"name": "renamed-template"}, "spec": {"image": "python:3.13"}} for plural in TEMPLATE_PLURALS[:3]},
    **{("PATCH", f"{WORKLOAD_TEMPLATES}/{plural}/{{templateId}}"): lambda w: {"spec": {"command": "python"}}
       for plural in TEMPLATE_PLURALS[:3]},  # an inference template is not changed, but made anew
}


# --- the routes, as the resolver has them ----------------------------------------------------------------

GROUP = re.compile(r"\(\?P<(\w+)>[^()]*\)")
CONVERTER = re.compile(r"<(?:\w+:)?(\w+)>")


def route_template(pattern: str) -> str:
    """`api/v1/^workloads/(?P<workloadId>[0-9a-f-]{36})$` or `cfg/apps/<str:app_id>` -> `/api/v1/workloads/{workloadId}`,
    with DRF's `pk` spelled `id` as in the OpenAPI document."""
    path = CONVERTER.sub(r"{\1}", GROUP.sub(r"{\1}", pattern)).replace("^", "").replace("$", "")
    return "/" + path.replace("{pk}", "{id}")


def methods_of(callback) -> list[str]:
    actions = getattr(callback, "actions", None)  # a DRF viewset route: {"get": "list", ...}
    if actions is not None:
        return sorted(method.upper() for method in actions)
    view = callback.view_class  # an APIView
    return sorted(m.upper() for m in view.http_method_names if hasattr(view, m) and m.upper() not in SKIPPED_METHODS)


def api_routes() -> list[tuple[str, str]]:
    found = []

    def walk(patterns, prefix: str):
        for entry in patterns:
            if isinstance(entry, URLResolver):
                walk(entry.url_patterns, prefix + str(entry.pattern))
                continue
            route = route_template(prefix + str(entry.pattern))
            if route.startswith(PREFIXES):
                found.extend((method, route) for method in methods_of(entry.callback))

    walk(get_resolver().url_patterns, "")
    return found


ROUTES = api_routes()


def test_every_entry_of_the_tables_is_a_route():
    assert sorted(set(TABLE) - set(ROUTES)) == []
    assert sorted(set(BODIES) - set(ROUTES)) == []
    assert sorted(set(QUERIES) - {route for _, route in ROUTES}) == []


@pytest.fixture
def world(world_of_the_module, db):  # built once for the module (tests/api/conftest.py)
    return world_of_the_module


def _clients(world) -> dict[str, APIClient]:
    users = world.org.users
    clients = {"anonymous": APIClient()}
    for role, user in [("viewer", users.viewer), ("member", users.member), ("project_admin", users.admin),
                       ("outsider", world.erin), ("platform_admin", users.platform_admin)]:
        clients[role] = APIClient()
        clients[role].credentials(HTTP_AUTHORIZATION="Bearer " + issue_token(user=user)["accessToken"])
    return clients


def _call(client: APIClient, method: str, url: str, body) -> int:
    with transaction.atomic():  # a savepoint: the next caller finds the world as it was
        response = client.generic(method, url, json.dumps(body) if body is not None else "",
                                  content_type="application/json")
        transaction.set_rollback(True)
    return response.status_code


@pytest.mark.parametrize(("method", "route"), ROUTES, ids=[f"{m} {r}" for m, r in ROUTES])
def test_each_caller_gets_the_code_the_table_gives(method, route, world):
    assert (method, route) in TABLE, f"{method} {route} has no entry in TABLE: say who may call it"
    url = re.sub(r"\{(\w+)\}", lambda m: path_values(world, route)[m[1]], route)
    url += QUERIES.get(route, lambda w: "")(world)
    body = BODIES.get((method, route), lambda w: None)(world)
    got = {role: _call(client, method, url, body) for role, client in _clients(world).items()}
    assert got == dict(zip(ROLES, TABLE[method, route], strict=True)), f"{method} {url} {body}"
