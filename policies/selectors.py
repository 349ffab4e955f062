"""Reads of policies: the layers of an org unit (one query) and its effective policy, and the API shapes."""

from __future__ import annotations

from dataclasses import dataclass

from perf import keyed_rows
from policies import pod_security
from policies.fallback import FALLBACK_ID, FALLBACK_LABEL, fallback_layer
from policies.merge import Effective, Layer, effective
from policies.models import Policy
from policies.schema import TYPES
from studio.models import Department, Project

TENANT_ID = 1  # a single-tenant control plane: Run:ai's tenantId of every policy


@dataclass(frozen=True)
class Unit:
    """An org unit a policy belongs to: the tenant, a department or a project (with its department)."""

    scope: str
    department: Department | None = None
    project: Project | None = None

    @property
    def key(self) -> str:
        return Policy.key_for(self.scope, department_id=getattr(self.department, "pk", None),
                              project_id=getattr(self.project, "pk", None))

    def chain(self) -> list[str]:
        """Keys of this unit and the wider ones, widest first."""
        keys = ["tenant"]
        if self.department is not None:
            keys.append(Policy.key_for("department", department_id=self.department.pk))
        if self.project is not None:
            keys.append(Policy.key_for("project", project_id=self.project.pk))
        return keys

    @property
    def label(self) -> str:
        """How pages and messages name it: "tenant", "department physics", "project team-a"."""
        if self.project is not None:
            return f"project {self.project.name}"
        if self.department is not None:
            return f"department {self.department.name}"
        return "tenant"

    def source(self) -> dict:
        source = {"scope": self.scope}
        if self.project is not None:
            source["projectId"] = self.project.pk
        if self.department is not None and self.scope in ("department", "project"):
            source["departmentId"] = str(self.department.pk)
        return source


def unit_of_project(project: Project) -> Unit:
    return Unit(scope="project", department=project.department, project=project)


def _label(row: Policy) -> str:
    if row.scope == Policy.Scope.PROJECT:
        return f"project {row.project.name}"
    if row.scope == Policy.Scope.DEPARTMENT:
        return f"department {row.department.name}"
    return "tenant"


def _source(row: Policy) -> dict:
    source = {"scope": row.scope}
    if row.project_id is not None:
        source["projectId"] = row.project_id
    if row.department_id is not None:
        source["departmentId"] = str(row.department_id)
    return source


def layer_of(row: Policy) -> Layer:
    return Layer(source=_source(row), label=_label(row), defaults=row.defaults or {}, rules=row.rules or {})


def stored_chain(policy_type: str, unit: Unit) -> list[Policy]:
    """The stored policies of `unit` and the units above it, widest first (one query)."""
    rows = {row.scope_key: row for row in keyed_rows.rows(Policy, related=("department", "project"),
                                                          policy_type=policy_type, scope_key=unit.chain())}
    return [rows[key] for key in unit.chain() if key in rows]


def effective_of(policy_type: str, rows: list[Policy]) -> Effective:
    return effective(policy_type, [fallback_layer(policy_type), *map(layer_of, rows)])


def effective_for_project(policy_type: str, project: Project) -> Effective:
    return effective_of(policy_type, stored_chain(policy_type, unit_of_project(project)))


def project_security_labels(project: Project) -> dict[str, str]:
    """The Pod Security Admission labels of the project's namespace (enforce, warn, audit + versions)."""
    return pod_security.namespace_labels(pod_security.level(
        {policy_type: effective_for_project(policy_type, project) for policy_type in TYPES}))


# --- API shapes (Run:ai's PolicyMeta, <Type>PolicyV2, PolicyListEntry) -------------------------------------

def _time(value) -> str:
    return value.isoformat().replace("+00:00", "Z")


def meta_of(row: Policy) -> dict:
    meta = {"id": str(row.id), "tenantId": TENANT_ID, "name": row.name, "scope": row.scope,
            "createdBy": row.created_by_name or "system", "createdAt": _time(row.created_at),
            "updatedBy": row.updated_by_name or row.created_by_name or "system", "updatedAt": _time(row.updated_at)}
    if row.project_id is not None:
        meta["projectId"] = row.project_id
        meta["clusterId"] = str(row.project.cluster_id)
    if row.department_id is not None:
        meta["departmentId"] = str(row.department_id)
    return meta


def own_policy(row: Policy) -> dict:
    return {"defaults": row.defaults or {}, "rules": row.rules or {}, "imposedAssets": row.imposed_assets or []}


def policy_view(policy_type: str, unit: Unit, rows: list[Policy], *, own: Policy | None = None) -> dict:
    """`<Type>PolicyV2`: the unit's own policy (null when it has none) and its effective policy."""
    merged = effective_of(policy_type, rows)
    own = own if own is not None else next((row for row in rows if row.scope_key == unit.key), None)
    body: dict = {"policy": own_policy(own) if own is not None else None,
                  "effective": {"defaults": merged.defaults, "rules": merged.rules_tree(),
                                "imposedAssets": [asset for row in rows for asset in row.imposed_assets or []]}}
    if own is not None:
        body = {"meta": meta_of(own), **body}
    if rows:
        body["effectiveUpdatedAt"] = _time(max(row.updated_at for row in rows))
    return body


def fallback_entries(policy_types) -> list[dict]:
    """The built-in secure default, as list entries (`includeFallbackPolicies=true`)."""
    return [{"type": policy_type[:-1], "meta": {
        "id": FALLBACK_ID, "tenantId": TENANT_ID, "name": f"{FALLBACK_LABEL} ({policy_type})", "scope": "tenant",
        "createdBy": "system", "createdAt": "1970-01-01T00:00:00Z", "updatedBy": "system",
        "updatedAt": "1970-01-01T00:00:00Z"}, "status": {"clusters": []}} for policy_type in policy_types]


SCOPE_ORDER = {"tenant": 0, "department": 1, "project": 2}


def list_entries(rows) -> list[dict]:
    """Widest scope first within each type, as the merge reads them."""
    rows = sorted(rows, key=lambda row: (row.policy_type, SCOPE_ORDER[row.scope], row.scope_key))
    return [{"type": row.policy_type[:-1], "meta": meta_of(row), "status": {"clusters": []}} for row in rows]
