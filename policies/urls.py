from django.urls import path

from policies import views

urlpatterns = [
    path("policies", views.policy_list, name="policy-list"),
    path("policies/export.csv", views.policy_export, name="policy-export"),
    path("policies/bulk", views.policy_bulk, name="policy-bulk"),
    path("policies/<str:policy_type>/edit", views.policy_edit, name="policy-edit"),
    path("policies/<str:policy_type>/delete", views.policy_remove, name="policy-delete"),
    path("projects/<int:pk>/policy", views.project_effective, name="project-policy"),
]
