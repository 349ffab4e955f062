from profiles import api
from studio.urls_router import Router

router = Router()
router.register("environment-templates", api.EnvironmentTemplateViewSet, basename="environment-template")
router.register(r"environment-templates/(?P<templateId>[0-9]+)/versions", api.TemplateVersionViewSet,
                basename="template-version")
router.register("service-profiles", api.ServiceProfileViewSet, basename="service-profile")
router.register("catalog", api.CatalogViewSet, basename="catalog")

urlpatterns = router.urls
