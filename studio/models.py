"""The models of the studio app, gathered for Django's registry.

Django registers the models of an app by importing its `models` module. Those of the studio app live with their
jobs: clusters and node pools in studio/clusters/models.py, departments and projects in studio/org/models.py,
roles, access rules, access keys, single sign-on, service accounts and temporary passwords in
studio/iam/models.py, the audit trail in studio/audit.py. They are imported here, at the top, so that Django
registers them all under the app label `studio` (their tables and migrations are the ones they had when they lived
in this module). Code of org, iam and clusters imports from its own package; `from studio.models import …` keeps
working for the other apps."""

from studio.audit import AuditEvent
from studio.clusters.models import (
    DEFAULT_NODE_POOL,
    NODE_POOL_LABEL,
    Cluster,
    ClusterQuerySet,
    GpuScheduler,
    NodePool,
    NodePoolQuerySet,
    default_gpu_scheduler,
)
from studio.iam.models import (
    DEFAULT_ROLE_OF_LEVEL,
    LEVEL_RANK,
    PLATFORM_ADMIN_ROLE,
    PLATFORM_ADMINS_GROUP,
    SERVICE_ACCOUNT_USERNAME,
    AccessKey,
    AccessRule,
    AccessRuleQuerySet,
    CliDeviceAuthorization,
    ExternalIdentity,
    IdentityProvider,
    Level,
    Role,
    ServiceAccount,
    TemporaryPassword,
    is_platform_admin,
    subject_rules,
)
from studio.org.models import Department, DepartmentQuerySet, Project, ProjectQuerySet
from studio.saved_views import SavedView

__all__ = [
    "DEFAULT_NODE_POOL", "DEFAULT_ROLE_OF_LEVEL", "LEVEL_RANK", "NODE_POOL_LABEL", "PLATFORM_ADMINS_GROUP",
    "PLATFORM_ADMIN_ROLE", "SERVICE_ACCOUNT_USERNAME", "AccessKey", "AccessRule", "AccessRuleQuerySet", "AuditEvent",
    "CliDeviceAuthorization",
    "Cluster", "ClusterQuerySet", "Department", "DepartmentQuerySet", "ExternalIdentity", "GpuScheduler",
    "IdentityProvider", "Level", "NodePool", "NodePoolQuerySet", "Project", "ProjectQuerySet", "Role",
    "SavedView", "ServiceAccount", "TemporaryPassword", "default_gpu_scheduler", "is_platform_admin", "subject_rules",
]
