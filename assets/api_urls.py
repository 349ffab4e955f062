"""Run:ai's asset routes, under /api/v1/asset/ (config/urls.py includes them)."""

from django.urls import path

from assets import api, template_api

urlpatterns = [
    *[path(f"asset/{prefix}", api.family_view(kinds, tag, listed_in, operation_id), name=f"asset-{listed_in}")
      for prefix, kinds, tag, listed_in, operation_id in api.FAMILIES],
    path("asset/datasource/pvc/<str:AssetId>/history", api.history_view(), name="asset-pvc-history"),
]
for prefix, kind, tag, stem in api.ROUTES:
    urlpatterns += [
        path(f"asset/{prefix}", api.collection_view(kind, tag, stem), name=f"asset-{kind}-list"),
        path(f"asset/{prefix}/<str:AssetId>", api.item_view(kind, tag, stem), name=f"asset-{kind}-detail"),
    ]

# Run:ai's Registry tag: registries, and the repositories and tags read from each (assets/registry_api.py).
from assets import registry_api  # noqa: E402

urlpatterns += [
    path("asset/registries", registry_api.RegistryListView.as_view(), name="asset-registry-list"),
    path("asset/registries/<str:AssetId>", registry_api.RegistryView.as_view(), name="asset-registry-detail"),
    path("asset/registries/<str:AssetId>/repositories", registry_api.RepositoriesView.as_view(),
         name="asset-registry-repositories"),
    path("asset/registries/<str:AssetId>/repositories/tags", registry_api.RepositoryTagsView.as_view(),
         name="asset-registry-tags"),
]
# Templates of assets: 2.18's asset API and latest's workload-templates (assets/template_api.py).
urlpatterns += [
    path("asset/workload-template", template_api.AssetTemplateListView.as_view(), name="asset-template-list"),
    path("asset/workload-template/<str:AssetId>", template_api.AssetTemplateItemView.as_view(),
         name="asset-template-detail"),
    path("workload-templates", template_api.TemplatesView.as_view(), name="workload-template-list"),
    path("workload-templates/count", template_api.TemplateCountView.as_view(), name="workload-template-count"),
    path("workload-templates/name-availability", template_api.TemplateNameView.as_view(),
         name="workload-template-name"),
]
for _plural in template_api.PLURALS:
    _listing, _item = template_api.typed_views(_plural)
    urlpatterns += [
        path(f"workload-templates/{_plural}", _listing, name=f"workload-template-{_plural}"),
        path(f"workload-templates/{_plural}/<str:templateId>", _item, name=f"workload-template-{_plural}-detail"),
    ]
urlpatterns.append(path("workload-templates/<str:templateId>", template_api.TemplateView.as_view(),
                        name="workload-template-detail"))
