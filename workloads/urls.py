from django.urls import path

from workloads import asset_views, launch_views, pool_views, upgrade_views, views

urlpatterns = [
    path("quota", pool_views.quota_overview, name="quota-overview"),
    path("quota/projects/<int:project_id>", pool_views.project_quota, name="project-quota"),
    path("gpus", pool_views.gpu_overview, name="gpu-overview"),
    path("gpus/<uuid:cluster_id>/pools/<str:name>", pool_views.gpu_node_pool, name="gpu-node-pool"),
    path("gpus/<uuid:cluster_id>/nodes.csv", pool_views.gpu_nodes_export, name="gpu-nodes-export"),
    path("gpus/<uuid:cluster_id>/pools.csv", pool_views.gpu_pools_export, name="gpu-pools-export"),
    path("gpus/<uuid:cluster_id>/queue.csv", pool_views.gpu_queue_export, name="gpu-queue-export"),
    path("gpus/<uuid:cluster_id>/nodes/<str:name>", pool_views.gpu_node, name="gpu-node"),
    path("workloads", views.workload_list, name="workload-list"),
    path("workloads/new", asset_views.workload_new, name="workload-new"),
    path("workloads/export.csv", views.workload_export, name="workload-export"),
    path("workloads/bulk", views.workload_bulk, name="workload-bulk"),
    path("workloads/<uuid:workload_id>", views.workload_detail, name="workload-detail"),
    path("workloads/<uuid:workload_id>/gpu-series", views.workload_gpu_series, name="workload-gpu-series"),
    path("workloads/<uuid:workload_id>/logs", views.workload_logs, name="workload-logs"),
    path("workloads/<uuid:workload_id>/suspend", views.workload_suspend, name="workload-suspend"),
    path("workloads/<uuid:workload_id>/resume", views.workload_resume, name="workload-resume"),
    path("workloads/<uuid:workload_id>/delete", views.workload_delete, name="workload-delete"),
    # A workload from a service profile (workloads.launch): the wizard's try, the catalog's launch, the upgrade.
    path("studio/service-profiles/<int:pk>/try", launch_views.profile_try, name="profile-try"),
    path("catalog/<int:pk>/launch", launch_views.catalog_launch, name="catalog-launch"),
    path("workloads/<uuid:workload_id>/upgrade", upgrade_views.upgrade_panel, name="workload-upgrade-panel"),
]
