"""`security.uidGidSource: fromIdpToken`: where a policy says so, the pods run as the uid, gid and supplementary
groups that the identity provider's claims gave at the user's last login, whatever the request says.

Dex's tokens carry no uid or gid claims (its users have none), so these users log in through the same login
service (studio.iam.sso_services.external_login) with the claims such a provider (Keycloak, Okta, an LDAP-backed
one) sends; the path from the claims to the pod is the product's own, through the API and the cluster."""

import pytest
from kubernetes import client

from studio.iam.providers import Provider
from studio.iam.sso_services import external_login
from tests.workloads.cluster_support import training_body
from workloads import manifests
from workloads.cluster import push
from workloads.models import Workload

pytestmark = pytest.mark.django_db(transaction=True)
PROVIDER = Provider(alias="oidc", discovery_url="https://idp.example.com", client_id="paas-studio",
                    client_secret="x", mappers={"uid": "uidNumber", "gid": "gidNumber",
                                                "supplementaryGroups": "memberOf"})


def provider_user(project, *, uid=1001, gid=2001, groups="3001,3002"):
    from studio.models import Role
    from studio.services import access_rule_create

    claims = {"sub": f"s-{uid}", "email": f"user{uid}@example.com", "groups": ["team-a"]}
    claims.update({k: v for k, v in (("uidNumber", uid), ("gidNumber", gid), ("memberOf", groups)) if v is not None})
    user = external_login(provider=PROVIDER, issuer="https://idp.example.com", claims=claims)
    access_rule_create(actor=None, subject_type="group", subject_id="team-a",
                       role=Role.objects.get(name="L1 researcher"), scope_type="project", scope_id=str(project.pk))
    return user


def test_a_policy_making_the_provider_decide_puts_her_ids_on_the_pods(sim_org, client_for):
    from tests.factories import UserFactory

    admin = client_for(UserFactory(username="root-ids", platform_admin=True))
    policy = admin.put("/api/v2/policy/trainings", {
        "meta": {"name": "ids-from-idp", "scope": "project", "projectId": sim_org.project.pk},
        "policy": {"defaults": {"security": {"uidGidSource": "fromIdpToken"}},
                   "rules": {"security": {"uidGidSource": {"canEdit": False}}}}}, format="json")
    assert policy.status_code == 200, policy.json()
    user = provider_user(sim_org.project)
    api = client_for(user)
    # She asks for uid 0: the policy does not let her choose the source, and the provider's ids replace hers.
    refused = api.post("/api/v1/workloads/trainings", training_body(
        sim_org.project, "as-root", security={"uidGidSource": "custom", "runAsUid": 0}), format="json")
    assert refused.status_code == 400
    assert "spec.security.uidGidSource" in {e["field"] for e in refused.json()["errors"]}
    created = api.post("/api/v1/workloads/trainings", training_body(sim_org.project, "as-her"), format="json")
    assert created.status_code == 200, created.json()
    security = created.json()["spec"]["security"]
    assert (security["uidGidSource"], security["runAsUid"], security["runAsGid"], security["supplementalGroups"]) \
        == ("fromIdpToken", 1001, 2001, "3001,3002")
    workload = Workload.objects.select_related("project").get(pk=created.json()["workloadId"])
    push.workload_push(workload.pk)
    job = client.BatchV1Api(sim_org.k8s).read_namespaced_job(manifests.object_name(push.workload_ref(workload)),
                                                              sim_org.namespace)
    context = job.spec.template.spec.security_context
    assert (context.run_as_user, context.run_as_group, context.supplemental_groups) == (1001, 2001, [3001, 3002])


def test_without_ids_from_the_provider_fromidptoken_is_a_400_naming_the_field(org, client_for):
    local = client_for(org.users.member)
    answer = local.post("/api/v1/workloads/trainings", training_body(
        org.a, "no-ids", security={"uidGidSource": "fromIdpToken", "runAsUid": 1234}), format="json")
    assert answer.status_code == 400
    [error] = answer.json()["errors"]
    assert error["field"] == "spec.security.uidGidSource" and "has none" in error["message"]
    no_uid = provider_user(org.a, uid=None, gid=None, groups=None)
    answer = client_for(no_uid).post("/api/v1/workloads/trainings", training_body(
        org.a, "no-ids", security={"uidGidSource": "fromIdpToken"}), format="json")
    assert answer.status_code == 400 and answer.json()["errors"][0]["field"] == "spec.security.uidGidSource"
