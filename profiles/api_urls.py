from django.urls import path

from profiles import api
from studio.urls_router import Router
from workloads.launch.upgrade_api import WorkloadUpgradeView

router = Router()
router.register("environment-templates", api.EnvironmentTemplateViewSet, basename="environment-template")
router.register(r"environment-templates/(?P<templateId>\d+)/versions", api.TemplateVersionViewSet,
                basename="template-version")
router.register("service-profiles", api.ServiceProfileViewSet, basename="service-profile")
router.register("catalog", api.CatalogViewSet, basename="catalog")

urlpatterns = [
    path("workloads/<uuid:workloadId>/upgrade", WorkloadUpgradeView.as_view(), name="workload-upgrade"),
    *router.urls,
]
