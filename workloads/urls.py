from django.urls import path

from workloads import views

urlpatterns = [
    path("workloads", views.workload_list, name="workload-list"),
    path("workloads/<uuid:workload_id>", views.workload_detail, name="workload-detail"),
    path("workloads/<uuid:workload_id>/logs", views.workload_logs, name="workload-logs"),
    path("workloads/<uuid:workload_id>/suspend", views.workload_suspend, name="workload-suspend"),
    path("workloads/<uuid:workload_id>/resume", views.workload_resume, name="workload-resume"),
    path("workloads/<uuid:workload_id>/delete", views.workload_delete, name="workload-delete"),
]
