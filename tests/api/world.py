"""One object of every kind in project alpha, for the API-wide tests (authorization matrix, schema fuzzing,
concurrency), and the path parameters that reach each of them. Nothing here is shared with another project,
so a caller outside alpha must get 404s for all of it."""

from datetime import timedelta
from types import SimpleNamespace

from django.utils import timezone

from assets.datavolumes import datavolume_create
from assets.models import StorageClassConfiguration
from assets.services import asset_create
from assets.templates import template_create
from kit.client_urls import client_url_create
from kit.sessions import session_request
from notifications.models import Notification
from notifications.services import channel_create, subscription_create
from studio.iam.sso_services import service_account_create
from studio.models import AccessKey, AccessRule, AuditEvent, IdentityProvider, Level, NodePool, Role
from tests.assets.bodies import KIND_OF, body
from tests.factories import (
    ApplicationFactory,
    ApplicationProfileFactory,
    ApplicationVersionFactory,
    EnvironmentTemplateFactory,
    MembershipFactory,
    ServiceProfileFactory,
    TemplateVersionFactory,
    UserFactory,
)
from tests.workloads.cluster_support import make_workload
from usage.models import NodePoolPrice, Report
from workloads.models import Pod, WorkloadEvent


def make_world(org) -> SimpleNamespace:
    """`org` plus erin (admin of beta: an admin of another project) and alpha's objects, one of a kind. The
    profile's version belongs to a template of its own, so that alpha-template and its version are in use by
    nothing and can be deleted."""
    erin = UserFactory(username="erin")
    MembershipFactory(user=erin, project=org.b, role=Level.ADMIN)
    training = make_workload(org.a, "train-one")
    workspace = make_workload(org.a, "space-one", kind="workspace")
    inference = make_workload(org.a, "serve-one", kind="inference")
    distributed = make_workload(org.a, "dist-one", kind="distributed", distributedFramework="PyTorch")
    now = timezone.now()
    pod = Pod.objects.create(workload=inference, uid="pod-uid-1", name="serve-one-0", phase="Running", created_at=now)
    WorkloadEvent.objects.create(workload=training, at=now, reason="Submitted", message="Accepted.")
    template = EnvironmentTemplateFactory(name="alpha-template", owner_project=org.a)
    version = TemplateVersionFactory(template=template, version="1.0.0")
    backing = TemplateVersionFactory(template=EnvironmentTemplateFactory(name="alpha-backing", owner_project=org.a))
    profile = ServiceProfileFactory(name="alpha-service", owner_project=org.a, template_version=backing)
    app = ApplicationFactory(id="usd-viewer")
    app_version = ApplicationVersionFactory(application=app, version="1.0.0")
    kit_profile = ApplicationProfileFactory(slug="alpha-stream", owner_project=org.a)
    stream = session_request(user=org.users.member, app_id=app.id, profile_id=kit_profile.slug, project_id=org.a.pk)
    key, _ = AccessKey.issue(user=org.users.member, name="bob-key")
    client_url, _ = client_url_create(user=org.users.member, project=org.a, name="bob-viewer")
    audit = AuditEvent.objects.create(actor=org.users.platform_admin, actor_name="root", action="create",
                                      object_type="studio.project", object_id=str(org.a.pk))
    access_rule = AccessRule.objects.get(project=org.a, user=org.users.member)
    node_pool = NodePool.objects.create(cluster=org.cluster, name="a100", label_key="run.ai/node-pool",
                                        label_value="a100")
    # The installation's identity provider (not reachable: port 9 of loopback) and a service account.
    IdentityProvider.objects.create(alias="oidc", discovery_url=IDP_BODY["oidcData"]["discoverDocumentUrl"],
                                    client_id="paas-studio", client_secret="s3cret", scopes=["openid"])
    service_account, _ = service_account_create(actor=org.users.platform_admin, name="ci-one")
    assets = _assets(org)
    workload_templates = _workload_templates(org)
    datavolume = datavolume_create(actor=org.users.admin, body={"name": "alpha-results", "projectId": str(org.a.pk),
                                                                "originPvcName": "results"})
    storage_class_config = StorageClassConfiguration.objects.create(
        cluster=org.cluster, storage_class_name="standard", spec={"permissions": {"allowDataSharing": True}},
        created_by="root", updated_by="root")
    report = Report.objects.create(name="alpha-usage", start=now - timedelta(days=1), end=now, csv="date\n",
                                   created_by_name="root", status=Report.Status.READY, status_updated_at=now)
    NodePoolPrice.objects.create(node_pool=node_pool, gpu_hour=2)
    # Notifications: an e-mail channel (nothing listens on port 9), bob's subscription and a notification of his.
    channel = channel_create(actor=org.users.platform_admin, name="alpha-email", kind="email", config={
        "smtpHost": "127.0.0.1", "smtpPort": 9, "from": "studio@example.com", "authType": "auth_none"})
    subscription = subscription_create(user=org.users.member, channels=[channel.name], events=[
        {"category": "Workload status change", "types": ["Failed"]}])
    notification = Notification.objects.create(user=org.users.member, key="world", category="Quota",
                                               type="QuotaReached", title="train-one: QuotaReached")
    return SimpleNamespace(
        report=report, channel=channel, subscription=subscription, notification=notification,
        assets=assets, workload_templates=workload_templates, datavolume=datavolume, storage_class_config=storage_class_config, service_account=service_account, access_rule=access_rule, node_pool=node_pool, role=Role.objects.get(name="L1 researcher"), org=org, erin=erin, training=training, workspace=workspace, inference=inference, distributed=distributed, stream=stream, pod=pod,
        template=template, version=version, profile=profile, app=app, app_version=app_version,
        kit_profile=kit_profile, access_key=key, audit=audit, client_url=client_url,
    )


def _assets(org) -> dict:
    """One asset of each kind, of alpha's scope, made by alpha's admin through the service: {kind: Asset}."""
    made = {}
    for path, kind in sorted(KIND_OF.items(), key=lambda item: not item[0].startswith("credentials/")):
        credential = made.get("password")
        made[kind] = asset_create(actor=org.users.admin, kind=kind, body=body(
            path, f"alpha-{kind.lower()}", project=org.a, credential_id=credential and str(credential.pk)))
    made["registry"] = asset_create(actor=org.users.admin, kind="registry", body=REGISTRY_BODY(org))
    return made


def REGISTRY_BODY(org) -> dict:  # noqa: N802 — a body, as the other constants of this module
    """Alpha's registry: on port 9 of loopback, where nothing answers (its repositories: 503 to its readers)."""
    return {"meta": {"name": "alpha-registry", "scope": "project", "projectId": org.a.pk},
            "spec": {"url": "http://127.0.0.1:9", "credentialKind": "password", "user": "u", "password": "p"}}


def _workload_templates(org) -> dict:
    """Alpha's templates: one of assets (an environment of its own, so that the other assets stay unused) and
    one of each workload type: {"asset" | type: Asset}."""
    environment = asset_create(actor=org.users.admin, kind="environment", body=body(
        "environment", "alpha-template-env", project=org.a))
    made = {"environment": environment, "asset": template_create(actor=org.users.admin, body={
        "meta": {"name": "alpha-asset-template", "scope": "project", "projectId": org.a.pk},
        "spec": {"assets": {"environment": str(environment.pk)}}})}
    for kind in ("workspace", "training", "distributed", "inference"):
        made[kind] = template_create(actor=org.users.admin, workload_type=kind, body={
            "meta": {"name": f"alpha-{kind}-template", "scopeType": "project", "scopeId": str(org.a.pk)},
            "spec": {"image": "python:3.12"}})
    return made


TEMPLATE_TYPES = {"workspaces": "workspace", "trainings": "training", "distributed": "distributed",
                  "inferences": "inference"}


def workload_template_id(world, route: str) -> str | None:
    """`{templateId}` of latest's workload-templates routes: alpha's template of the route's type."""
    if not route.startswith("/api/v1/workload-templates/"):
        return None
    return str(world.workload_templates[TEMPLATE_TYPES.get(route.split("/")[4], "training")].pk)


# The asset kind of each route under /api/v1/asset/ (its `{AssetId}`).
ASSET_ROUTES = {"/api/v1/asset/" + path: kind for path, kind in KIND_OF.items()}
ASSET_ROUTES["/api/v1/asset/registries"] = "registry"


def asset_id(world, route: str) -> str | None:
    kind = next((k for prefix, k in ASSET_ROUTES.items() if route.startswith(prefix + "/")), None)
    return str(world.assets[kind].pk) if kind else None


IDP_BODY = {"type": "oidc", "oidcData": {"clientId": "paas-studio", "clientSecret": "s3cret",
                                        "discoverDocumentUrl": "http://127.0.0.1:9/.well-known/openid-configuration"}}

# `{id}` of each collection: the object of alpha that a detail route aims at.
DETAIL_IDS = {
    "/api/v1/access-keys/": lambda w: w.access_key.pk,
    "/api/v1/audit-events/": lambda w: w.audit.pk,
    "/api/v1/catalog/": lambda w: w.profile.pk,
    "/api/v1/environment-templates/": lambda w: w.template.pk,
    "/api/v1/org-unit/departments/": lambda w: w.org.department.pk,
    "/api/v1/org-unit/projects/": lambda w: w.org.a.pk,
    "/api/v1/service-profiles/": lambda w: w.profile.pk,
    "/v1/k8s/clusters/": lambda w: w.node_pool.pk,  # …/node-pools/{id}
    "/api/v1/subscriptions/": lambda w: w.subscription.pk,
    "/api/v1/notifications/": lambda w: w.notification.pk,
    "/api/v1/storage-class-configuration/": lambda w: w.storage_class_config.pk,
}
WORKLOADS_BY_KIND = {"trainings": "training", "workspaces": "workspace", "inferences": "inference",
                     "distributed": "distributed"}


def path_values(world, route: str) -> dict[str, str]:
    """Alpha's object for each parameter a route template (`/api/v1/workloads/{workloadId}/pods`) may hold."""
    org = world.org
    detail = next((get for prefix, get in DETAIL_IDS.items() if route.startswith(prefix)), None)
    segments = route.split("/")
    kind = WORKLOADS_BY_KIND.get(segments[4], "training") if route.startswith("/api/v1/workloads/") else "training"
    if "{podId}" in route:
        kind = "inference"  # the world's pod is the inference's
    values = {
        "id": detail(world) if detail else None,
        "workloadId": getattr(world, kind).pk,
        "podId": world.pod.uid,
        "clusterId": org.cluster.pk,
        "templateId": workload_template_id(world, route) or world.template.pk,
        "version": world.version.version,  # "1.0.0", as is the Kit app's version
        "projectId": org.a.pk,
        "userId": org.users.member.pk,
        "app_id": world.app.pk,
        "profile_id": world.kit_profile.slug,
        "session_id": world.stream.pk,
        "accessRuleId": world.access_rule.pk,
        "nodepoolId": world.node_pool.pk,
        "nodepoolName": world.node_pool.name,
        "departmentId": org.department.pk,
        "clusterUuid": org.cluster.pk,
        "operatingSystem": "linux", "architecture": "amd64", "documentName": "cli.md",  # the CLI's download
        "roleIdPath": world.role.pk,
        "idp": "oidc",
        "serviceAccountId": world.service_account.pk,
        "clientUrlId": world.client_url.pk,
        "AssetId": asset_id(world, route) or (world.workload_templates["asset"].pk if route.startswith(
            "/api/v1/asset/workload-template/") else None),
        "reportId": world.report.pk,
        "datavolumeId": world.datavolume.pk,
        "uuid": org.cluster.pk,
        "name": world.channel.name,
    }
    return {name: str(value) for name, value in values.items() if value is not None}
