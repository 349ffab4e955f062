from django.urls import path

from studio.urls_router import Router
from workloads import api
from workloads.api import history, pods
from workloads.api.launch import launch_urls
from workloads.api.upgrades import WorkloadUpgradeView
from workloads.telemetry import node_telemetry, org_metrics, org_telemetry, workload_telemetry

router = Router()
# Kinds first: "workloads/trainings" must not be read as a workload id.
router.register("workloads/pods", pods.PodViewSet, basename="all-pods")
router.register("workloads/trainings", api.TrainingViewSet, basename="training")
router.register("workloads/workspaces", api.WorkspaceViewSet, basename="workspace")
router.register("workloads/inferences", api.InferenceViewSet, basename="inference")
router.register("workloads/distributed", api.DistributedViewSet, basename="distributed")
router.register("workloads", api.WorkloadViewSet, basename="workload")

urlpatterns = [
    path("workloads/<uuid:workloadId>/history", history.WorkloadHistoryView.as_view(), name="workload-history"),
    path("workloads/<uuid:workloadId>/upgrade", WorkloadUpgradeView.as_view(), name="workload-upgrade"),
    path("workloads/telemetry", workload_telemetry.WorkloadsTelemetryView.as_view(), name="workloads-telemetry"),
    path("nodes/telemetry", node_telemetry.NodeTelemetryView.as_view(), name="nodes-telemetry"),
    path("clusters/<uuid:clusterUuid>/nodepools/<str:nodepoolName>/metrics", node_telemetry.NodePoolMetricsView.as_view(),
         name="nodepool-metrics"),
    path("org-unit/projects/telemetry", org_telemetry.ProjectsTelemetryView.as_view(), name="projects-telemetry"),
    path("org-unit/departments/telemetry", org_telemetry.DepartmentsTelemetryView.as_view(),
         name="departments-telemetry"),
    path("org-unit/projects/<int:projectId>/metrics", org_metrics.ProjectMetricsView.as_view(), name="project-metrics"),
    path("org-unit/departments/<int:departmentId>/metrics", org_metrics.DepartmentMetricsView.as_view(),
         name="department-metrics"),
    *router.urls,
    *launch_urls(),  # POST service-profiles/{id}/launch: a workload from a profile (workloads.launch)
]
