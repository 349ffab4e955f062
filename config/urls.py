"""The one URL registry: pages, /api/v1, /cfg, /streaming, /healthz, /readyz, /metrics, the OpenAPI schema."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.templatetags.static import static
from django.urls import include, path, re_path
from django.views.decorators.csrf import csrf_exempt
from django.views.generic import RedirectView
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerSplitView

from assets import api_urls as assets_urls
from studio import api, audit_logs, errors, metrics, ops, views
from studio.cli_api import cli_urls
from studio.cli_device import device_page, device_urls
from studio.clusters import api as cluster_api
from studio.clusters import k8s_node_pools
from studio.iam import api as iam_api
from studio.iam import idp_api, service_account_api, sso_views, token_v2
from studio.iam import views as user_views
from studio.org import access_views, node_pool_api, pool_views, quota_api
from studio.org import views as org_views
from studio.urls_router import Router

router = Router()
router.register("clusters", api.ClusterViewSet, basename="cluster")
router.register("org-unit/departments", api.DepartmentViewSet, basename="department")
router.register("org-unit/projects", api.ProjectViewSet, basename="project")
router.register(r"org-unit/projects/(?P<projectId>[0-9]+)/members", api.MemberViewSet, basename="member")
router.register("access-keys", api.AccessKeyViewSet, basename="access-key")
router.register("audit-events", api.AuditEventViewSet, basename="audit-event")

api_v1 = [
    path("token", api.TokenView.as_view(), name="token"),
    path("token/revoke", api.TokenRevokeView.as_view(), name="token-revoke"),
    path("me", api.MeView.as_view(), name="me"),
    path("me/password", iam_api.MePasswordView.as_view(), name="me-password"),
    path("authorization/roles", iam_api.RoleListView.as_view(), name="role-list"),
    path("authorization/roles/<int:roleIdPath>", iam_api.RoleDetailView.as_view(), name="role-detail"),
    path("authorization/access-rules", iam_api.AccessRuleListView.as_view(), name="access-rule-list"),
    path("authorization/access-rules/count", iam_api.AccessRuleCountView.as_view(), name="access-rule-count"),
    path("authorization/access-rules/<int:accessRuleId>", iam_api.AccessRuleDetailView.as_view(),
         name="access-rule-detail"),
    path("org-unit/projects/count", api.ProjectViewSet.as_view({"get": "count"}), name="project-count"),
    path("org-unit/departments/count", api.DepartmentViewSet.as_view({"get": "count"}), name="department-count"),
    path("org-unit/projects/<int:projectId>/resources", quota_api.ProjectResourcesView.as_view(),
         name="project-resources"),
    path("org-unit/departments/<int:departmentId>/resources", quota_api.DepartmentResourcesView.as_view(),
         name="department-resources"),
    path("node-pools", node_pool_api.NodePoolListView.as_view(), name="node-pool-list"),
    path("node-pools/count", cluster_api.NodePoolCountView.as_view(), name="node-pool-count"),
    path("node-pools/<str:nodepoolId>", node_pool_api.NodePoolDetailView.as_view(), name="node-pool-detail"),
    path("nodes", cluster_api.TenantNodesView.as_view(), name="tenant-nodes"),
    path("nodes/count", cluster_api.TenantNodesCountView.as_view(), name="tenant-nodes-count"),
    path("clusters/<uuid:clusterUuid>/nodes", cluster_api.ClusterNodesView.as_view(), name="cluster-nodes"),
    path("users", iam_api.UserListView.as_view(), name="user-list"),
    path("users/count", iam_api.UserCountView.as_view(), name="user-count"),
    path("users/<str:userId>", iam_api.UserDetailView.as_view(), name="user-detail"),
    path("users/<str:userId>/password", iam_api.UserPasswordResetView.as_view(), name="user-password"),
    path("idps", idp_api.IdpListView.as_view(), name="idp-list"),
    path("idps/<str:idp>", idp_api.IdpDetailView.as_view(), name="idp-detail"),
    path("idps/<str:idp>/mappers", idp_api.IdpMappersView.as_view(), name="idp-mappers"),
    path("audit/log", audit_logs.AuditLogView.as_view(), name="audit-log"),
    path("audit/log/file", audit_logs.AuditLogFileView.as_view(), name="audit-log-file"),
    path("service-accounts", service_account_api.ServiceAccountListView.as_view(), name="service-account-list"),
    path("service-accounts/<str:serviceAccountId>", service_account_api.ServiceAccountDetailView.as_view(),
         name="service-account-detail"),
    path("service-accounts/<str:serviceAccountId>/secret", service_account_api.ServiceAccountSecretView.as_view(),
         name="service-account-secret"),
    *cli_urls(),  # Run:ai's Researcher Command Line Interface: the `studio` CLI's installers and wheel
    *device_urls(),  # the CLI's single sign-on (RFC 8628's device authorization grant)
    *router.urls,
    path("", include("workloads.api.urls")),
    path("", include("assets.api_urls")),
    path("", include("profiles.api_urls")),
    path("", include("kit.api_urls")),
    path("", include("usage.api_urls")),
    path("", include("notifications.api_urls")),
]

# Run:ai 2.18's node pools of a cluster (deprecated in latest for /api/v1/node-pools), at Run:ai's own paths.
k8s_v1 = [
    path("clusters/<uuid:clusterId>/node-pools", k8s_node_pools.ClusterNodePoolsView.as_view(),
         name="k8s-node-pool-list"),
    path("clusters/<uuid:clusterId>/node-pools/<int:id>", k8s_node_pools.ClusterNodePoolView.as_view(),
         name="k8s-node-pool-detail"),
    path("clusters/<uuid:clusterId>/node-pools/<int:id>/labels", k8s_node_pools.ClusterNodePoolLabelsView.as_view(),
         name="k8s-node-pool-labels"),
]

urlpatterns = [
    path("", include("portal.urls")),
    path("login", views.LoginView.as_view(), name="login"),
    path("logout", auth_views.LogoutView.as_view(), name="logout"),
    path("sso/login", sso_views.SsoStartView.as_view(), name="sso-login"),
    path("sso/callback", sso_views.SsoCallbackView.as_view(), name="sso-callback"),
    path("switch-project", views.switch_project, name="switch-project"),
    path("org/audit", org_views.audit_trail, name="audit-trail"),
    path("org/audit/export.csv", org_views.audit_export, name="audit-export"),
    path("org/users", user_views.user_list, name="portal-users"),
    path("org/users/export.csv", user_views.user_export, name="portal-users-export"),
    path("org/users/<int:pk>", user_views.user_detail, name="portal-user"),
    path("account/access-keys", user_views.access_key_list, name="portal-access-keys"),
    path("account/access-keys/export.csv", user_views.access_key_export, name="portal-access-keys-export"),
    path("account/access-keys/bulk", user_views.access_key_bulk, name="portal-access-keys-bulk"),
    path("account/password", user_views.account_password, name="account-password"),
    path("cli/device", device_page, name="cli-device"),  # the CLI's single sign-on: approve its code
    path("account/views", views.saved_view_save, name="saved-view-save"),
    path("account/views/<int:view_id>/delete", views.saved_view_delete, name="saved-view-delete"),
    path("account/access-keys/<uuid:pk>/delete", user_views.access_key_delete, name="portal-access-key-delete"),
    path("org/projects/<int:pk>/members", org_views.project_members, name="project-members"),
    path("org/projects/<int:pk>/members/<int:user_id>/remove", org_views.member_remove, name="member-remove"),
    path("org/projects/<int:pk>/members/suggestions", org_views.member_suggestions, name="member-suggestions"),
    path("org/projects/<int:pk>/members/export.csv", org_views.member_export, name="member-export"),
    path("org/projects/<int:pk>/members/bulk", org_views.member_bulk, name="member-bulk"),
    re_path(r"^org/(?P<kind>clusters|departments|projects)$", org_views.org_list, name="org-list"),
    path("org/clusters/export.csv", org_views.org_export, {"kind": "clusters"}, name="org-clusters-export"),
    path("org/clusters/bulk", org_views.org_bulk, {"kind": "clusters"}, name="org-clusters-bulk"),
    path("org/departments/export.csv", org_views.org_export, {"kind": "departments"}, name="org-departments-export"),
    path("org/departments/bulk", org_views.org_bulk, {"kind": "departments"}, name="org-departments-bulk"),
    path("org/projects/export.csv", org_views.org_export, {"kind": "projects"}, name="org-projects-export"),
    path("org/projects/bulk", org_views.org_bulk, {"kind": "projects"}, name="org-projects-bulk"),
    re_path(r"^org/(?P<kind>clusters|departments|projects)/(?P<pk>[-\w]+)/edit$", org_views.org_edit,
            name="org-edit"),
    path("org/clusters/<uuid:pk>/test", org_views.cluster_test, name="cluster-test"),
    path("org/clusters/<uuid:pk>/node-pools", pool_views.node_pools, name="node-pools"),
    path("org/clusters/<uuid:pk>/node-pools/<int:pool_id>/edit", pool_views.node_pool_edit, name="node-pool-edit"),
    path("org/clusters/<uuid:pk>/node-pools/<int:pool_id>/delete", pool_views.node_pool_delete,
         name="node-pool-delete"),
    path("org/departments/<int:pk>/access", access_views.department_access, name="department-access"),
    path("org/departments/<int:pk>/access/<int:user_id>/remove", access_views.department_access_remove,
         name="department-access-remove"),
    path("org/departments/<int:pk>/access/suggestions", access_views.department_access_suggestions,
         name="department-access-suggestions"),
    re_path(r"^org/(?P<kind>clusters|departments|projects)/(?P<pk>[-\w]+)/delete$", org_views.org_delete,
            name="org-delete"),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("v1/k8s/", include(k8s_v1)),
    path("v1/k8s/audit", audit_logs.Audit218View.as_view(), name="audit-218"),  # Run:ai 2.18's Audit tag
    path("api/v2/token", token_v2.TokenV2View.as_view(), name="token-v2"),
    path("api/v2/", include("policies.api_urls")),
    path("api/v2/", include(assets_urls.api_v2_urlpatterns)),
    path("v1/k8s/", include(assets_urls.k8s_urlpatterns)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerSplitView.as_view(url_name="schema"), name="docs"),
    path("cfg/", include("kit.cfg_urls")),
    path("streaming/", include("kit.streaming_urls")),
    # The same, under a client URL (kit.client_urls): a Kit client's app and stream server, the token in the path
    path("kit-client/<str:client_token>/cfg/", include(("kit.cfg_urls", "kit-client-cfg"))),
    path("kit-client/<str:client_token>/streaming/", include(("kit.streaming_urls", "kit-client-streaming"))),
    path("healthz", ops.healthz, name="healthz"),
    # Browsers ask for /favicon.ico on pages that name no icon (a JSON answer, a file): the shipped SVG.
    path("favicon.ico", RedirectView.as_view(url=static("studio/favicon.svg"), permanent=True)),
    path("readyz", ops.readyz, name="readyz"),
    path("metrics", metrics.metrics, name="prometheus-metrics"),
    path("", include("workloads.urls")),
    path("", include("profiles.urls")),
    path("", include("kit.urls")),
    path("", include("policies.urls")),
    path("", include("usage.urls")),
    path("", include("notifications.urls")),
    path("", include("assets.urls")),
    # An unknown path under the APIs is a JSON 404 even with DEBUG on (make run), where Django would answer
    # its HTML debug page instead of handler404.
    re_path(r"^(?:api|cfg|streaming|kit-client|v1/k8s)/", csrf_exempt(errors.json_not_found)),
]

handler400 = "studio.errors.handler400"
handler404 = "studio.errors.handler404"
handler500 = "studio.errors.handler500"
