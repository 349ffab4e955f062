from django.urls import path

from policies import api

urlpatterns = [
    path("policy", api.PolicyListView.as_view(), name="policy-list"),
    *[path(f"policy/{policy_type}", api.type_view(policy_type), name=f"policy-{policy_type}")
      for policy_type in ("trainings", "workspaces", "inferences")],
]
