"""Workload policies as Run:ai stores them: one per policy type and org unit (tenant, department, project),
each with the defaults and rules of its own scope. The built-in secure default is code (policies.fallback)."""

import uuid

from django.conf import settings
from django.db import models

from studio.models import Department, Project


class Policy(models.Model):
    class Type(models.TextChoices):
        TRAININGS = "trainings"
        WORKSPACES = "workspaces"
        INFERENCES = "inferences"

    class Scope(models.TextChoices):
        TENANT = "tenant"
        DEPARTMENT = "department"
        PROJECT = "project"

    id = models.UUIDField(primary_key=True, default=uuid.uuid4, editable=False)
    policy_type = models.CharField(max_length=16, choices=Type.choices)
    scope = models.CharField(max_length=16, choices=Scope.choices)
    department = models.ForeignKey(Department, on_delete=models.CASCADE, null=True, blank=True,
                                   related_name="policies")
    project = models.ForeignKey(Project, on_delete=models.CASCADE, null=True, blank=True, related_name="policies")
    # "tenant", "department:<id>" or "project:<id>": one policy per type and org unit, on every database.
    scope_key = models.CharField(max_length=40, editable=False)
    name = models.CharField(max_length=200)
    defaults = models.JSONField(default=dict, blank=True)
    rules = models.JSONField(default=dict, blank=True)
    imposed_assets = models.JSONField(default=list, blank=True)
    created_by = models.ForeignKey(settings.AUTH_USER_MODEL, on_delete=models.SET_NULL, null=True, blank=True,
                                   related_name="+")
    created_by_name = models.CharField(max_length=150, blank=True, default="")
    updated_by_name = models.CharField(max_length=150, blank=True, default="")
    created_at = models.DateTimeField(auto_now_add=True)
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        constraints = [models.UniqueConstraint(fields=["policy_type", "scope_key"], name="one_policy_per_unit")]
        ordering = ["policy_type", "scope", "scope_key"]
        verbose_name_plural = "policies"

    def __str__(self):
        return self.name

    @staticmethod
    def key_for(scope: str, *, department_id=None, project_id=None) -> str:
        if scope == Policy.Scope.DEPARTMENT:
            return f"department:{department_id}"
        if scope == Policy.Scope.PROJECT:
            return f"project:{project_id}"
        return "tenant"
