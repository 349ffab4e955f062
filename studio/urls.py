"""The one URL registry: pages, /api/v1, /cfg, /streaming, /healthz, /readyz, /metrics, the OpenAPI schema."""

from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.urls import include, path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularSwaggerView

from studio import api, metrics, ops, org_views, views
from studio.urls_router import Router

router = Router()
router.register("clusters", api.ClusterViewSet, basename="cluster")
router.register("org-unit/departments", api.DepartmentViewSet, basename="department")
router.register("org-unit/projects", api.ProjectViewSet, basename="project")
router.register(r"org-unit/projects/(?P<projectId>\d+)/members", api.MemberViewSet, basename="member")
router.register("access-keys", api.AccessKeyViewSet, basename="access-key")
router.register("audit-events", api.AuditEventViewSet, basename="audit-event")

api_v1 = [
    path("token", api.TokenView.as_view(), name="token"),
    path("token/revoke", api.TokenRevokeView.as_view(), name="token-revoke"),
    path("me", api.MeView.as_view(), name="me"),
    *router.urls,
    path("", include("workloads.api_urls")),
    path("", include("profiles.api_urls")),
]

urlpatterns = [
    path("", views.home, name="home"),
    path("login", auth_views.LoginView.as_view(), name="login"),
    path("logout", auth_views.LogoutView.as_view(), name="logout"),
    path("switch-project", views.switch_project, name="switch-project"),
    path("org/audit", org_views.audit_trail, name="audit-trail"),
    path("org/projects/<int:pk>/members", org_views.project_members, name="project-members"),
    path("org/projects/<int:pk>/members/<int:user_id>/remove", org_views.member_remove, name="member-remove"),
    re_path(r"^org/(?P<kind>clusters|departments|projects)$", org_views.org_list, name="org-list"),
    re_path(r"^org/(?P<kind>clusters|departments|projects)/(?P<pk>[-\w]+)/delete$", org_views.org_delete,
            name="org-delete"),
    path("admin/", admin.site.urls),
    path("api/v1/", include(api_v1)),
    path("api/schema/", SpectacularAPIView.as_view(), name="schema"),
    path("api/docs/", SpectacularSwaggerView.as_view(url_name="schema"), name="docs"),
    path("cfg/", include("kit.cfg_urls")),
    path("streaming/", include("kit.streaming_urls")),
    path("healthz", ops.healthz, name="healthz"),
    path("readyz", ops.readyz, name="readyz"),
    path("metrics", metrics.metrics, name="prometheus-metrics"),
    path("", include("workloads.urls")),
    path("", include("profiles.urls")),
    path("", include("kit.urls")),
]

handler404 = "studio.errors.handler404"
handler500 = "studio.errors.handler500"
