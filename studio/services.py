"""Writes of the organisation: one function per change, each validated, audited and atomic."""

import secrets
from decimal import Decimal

from django.contrib.auth import get_user_model
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.db.models import Model, ProtectedError, Q
from django.utils import timezone
from rest_framework import exceptions

from studio.audit import audit_record, snapshot
from studio.clusters import kube
from studio.errors import Conflict
from studio.iam import passwords
from studio.models import (
    DEFAULT_NODE_POOL,
    DEFAULT_ROLE_OF_LEVEL,
    LEVEL_RANK,
    NODE_POOL_LABEL,
    PLATFORM_ADMIN_ROLE,
    AccessKey,
    AccessRule,
    AuditEvent,
    Cluster,
    Department,
    NodePool,
    Project,
    Role,
)
from studio.org.queues import queues_sync_on_commit
from studio.org.quotas import department_gpu_bounds, gpu_deserved_by_pool, gpu_totals, summed_by_pool
from studio.queue import enqueue_on_commit
from studio.signals import deleting, project_created
from studio.words import gpu_count, noun


def _queues_touched(instance: Model) -> None:
    """A project, a department or a cluster changed: its clusters' KAI queues follow once it commits."""
    if isinstance(instance, Project):
        queues_sync_on_commit(project=instance)
    elif isinstance(instance, Department):
        queues_sync_on_commit(department=instance)
    elif isinstance(instance, Cluster):
        queues_sync_on_commit(clusters=[instance])


def _save(instance: Model, *, actor, action: str, before: dict | None = None) -> Model:
    instance.full_clean()
    try:
        with transaction.atomic():
            instance.save()
            audit_record(actor=actor, action=action, instance=instance, before=before)
            _queues_touched(instance)
    except IntegrityError as exc:
        raise Conflict(f"A {instance._meta.verbose_name} with these values already exists.") from exc
    return instance


def model_create(model: type[Model], *, actor, **fields) -> Model:
    return _save(model(**fields), actor=actor, action=AuditEvent.Action.CREATE)


def model_update(instance: Model, *, actor, **fields) -> Model:
    """`fields` written onto the row as it is stored now, read under its lock: a concurrent update of other fields
    is kept, not overwritten with the values `instance` was read with. A read-modify-write of one field (a merge
    into a JSON list) must read it under the same lock: `studio.concurrency.locked_if_match` in an atomic view."""
    with transaction.atomic():
        locked = type(instance)._default_manager.select_for_update().get(pk=instance.pk)
        before = snapshot(locked)
        for name, value in fields.items():
            setattr(locked, name, value)
            setattr(instance, name, value)
        return _save(locked, actor=actor, action=AuditEvent.Action.UPDATE, before=before)


def model_delete(instance: Model, *, actor) -> None:
    before = snapshot(instance)
    try:
        with transaction.atomic():
            _queues_touched(instance)  # before the row goes: its cluster is read from it
            deleting.send(sender=type(instance), instance=instance)
            instance.delete()
            audit_record(actor=actor, action=AuditEvent.Action.DELETE, instance=instance, before=before)
    except ProtectedError as exc:
        raise Conflict(f"This {instance._meta.verbose_name} is still in use and cannot be deleted.") from exc


def _check_gpu(deserved: Decimal, limit: Decimal | None) -> None:
    if limit is not None and limit < deserved:
        raise ValidationError({"resources.gpu.limit": "Must be at least resources.gpu.deserved."})


def _username(actor) -> str:
    return getattr(actor, "username", "") or ""


def project_create(*, actor, name: str, department: Department, cluster: Cluster,
                   gpu_deserved: Decimal = Decimal(0), gpu_limit: Decimal | None = None,
                   scheduling_rules: dict | None = None, node_pool_resources: list | None = None,
                   namespace: str | None = None, description: str = "", runai_settings: dict | None = None) -> Project:
    """A project; its namespace is `studio-<name>` unless Run:ai's `requestedNamespace` names another."""
    _check_gpu(gpu_deserved, gpu_limit)
    _check_department_cluster(department, cluster)
    if namespace and Project.objects.filter(namespace=namespace).exists():
        raise Conflict(f"Namespace {namespace} is another project's.")
    with transaction.atomic():
        if node_pool_resources:
            _check_department_share(department, project_pk=None, resources=node_pool_resources)
        project = model_create(
            Project, actor=actor, name=name, department=department, cluster=cluster,
            namespace=namespace or Project.namespace_for(name), gpu_deserved=gpu_deserved, gpu_limit=gpu_limit,
            scheduling_rules={k: v for k, v in (scheduling_rules or {}).items() if v is not None},
            node_pool_resources=node_pool_resources or [], description=description,
            runai_settings=runai_settings or {}, created_by=_username(actor),
        )
    enqueue_on_commit("studio.tasks.project_namespace_ensure", project.pk)
    project_created.send(sender=Project, instance=project)  # the policies label its namespace for Pod Security
    return project


def _check_department_cluster(department: Department, cluster: Cluster) -> None:
    # A Run:ai department is on one cluster: once it names one, its projects are there.
    if department.cluster_id and department.cluster_id != cluster.pk:
        raise ValidationError({"clusterId": f"Department {department.name} is on another cluster."})


def project_update(project: Project, *, actor, **fields) -> Project:
    if "name" in fields and fields["name"] != project.name:
        raise ValidationError({"name": "A project's name cannot be changed; its namespace is derived from it."})
    if "cluster" in fields and fields["cluster"] != project.cluster:
        raise ValidationError({"clusterId": "A project cannot move to another cluster."})
    if "department" in fields:
        _check_department_cluster(fields["department"], project.cluster)
    _check_gpu(fields.get("gpu_deserved", project.gpu_deserved), fields.get("gpu_limit", project.gpu_limit))
    with transaction.atomic():
        if "node_pool_resources" in fields or "department" in fields:
            _check_department_share(fields.get("department", project.department), project_pk=project.pk,
                                    resources=fields.get("node_pool_resources", project.node_pool_resources))
        return model_update(project, actor=actor, updated_by=_username(actor), **fields)


def project_resources_set(project: Project, *, actor, resources: list[dict]) -> Project:
    """Replace the project's per-node-pool quotas (a `resources` array as `studio.org.quotas.resources_from` reads
    it); its GPU totals become the sums over its pools. The API's PUT/PATCH of `…/resources` and the portal's quota
    form both write through here."""
    deserved, limit = gpu_totals(resources)
    return project_update(project, actor=actor, node_pool_resources=resources, gpu_deserved=deserved,
                          gpu_limit=limit)


def department_create(*, actor, name: str, **fields) -> Department:
    return model_create(Department, actor=actor, name=name, created_by=_username(actor), **fields)


def department_update(department: Department, *, actor, **fields) -> Department:
    cluster = fields.get("cluster")
    if cluster is not None and department.projects.exclude(cluster=cluster).exists():
        raise ValidationError({"clusterId": "The department has projects on another cluster."})
    with transaction.atomic():
        if "node_pool_resources" in fields:
            _check_projects_fit(Department.objects.select_for_update().get(pk=department.pk),
                                fields["node_pool_resources"])
        return model_update(department, actor=actor, updated_by=_username(actor), **fields)


# --- a department's deserved GPUs bound its projects', pool by pool (Run:ai) ---------------------------------
# Refused with a 400 naming the department rather than accepted with a warning: a share the department cannot give
# is no guarantee, and the scheduler's parent queue would hand out less than the projects' pages promise.

def _check_department_share(department: Department, *, project_pk, resources) -> None:
    """A project's deserved GPUs in a pool may not take its department's projects past the department's deserved
    there. The department's row is locked first, so two projects' updates at once are checked one after the other."""
    department = Department.objects.select_for_update().get(pk=department.pk)
    bounds = department_gpu_bounds(department.node_pool_resources)
    if not bounds:
        return
    others = summed_by_pool(Project.objects.filter(department=department).exclude(pk=project_pk)
                            .values_list("node_pool_resources", flat=True))
    errors = {}
    for index, entry in enumerate(resources or ()):
        name = ((entry.get("nodePool") or {}) if isinstance(entry, dict) else {}).get("name")
        mine = gpu_deserved_by_pool([entry]).get(name, 0.0)
        if name in bounds and mine + others.get(name, 0.0) > bounds[name] + 1e-9:
            errors[f"resources[{index}].gpu.deserved"] = (
                f"Department {department.name} deserves {gpu_count(bounds[name])} in node pool {name}; its projects "
                f"would deserve {mine + others.get(name, 0.0):g} ({others.get(name, 0.0):g} given to its other "
                f"projects).")
    if errors:
        raise ValidationError(errors)


def _check_projects_fit(department: Department, resources) -> None:
    """A department's deserved GPUs in a pool may not fall below what its projects already deserve there."""
    given = summed_by_pool(Project.objects.filter(department=department).values_list("node_pool_resources", flat=True))
    errors = {}
    for index, entry in enumerate(resources or ()):
        value = ((entry.get("gpu") or {}) if isinstance(entry, dict) else {}).get("deserved")
        name = ((entry.get("nodePool") or {}) if isinstance(entry, dict) else {}).get("name")
        if value is not None and float(value) >= 0 and given.get(name, 0.0) > float(value) + 1e-9:
            errors[f"resources[{index}].gpu.deserved"] = (
                f"Department {department.name}'s projects deserve {gpu_count(given[name])} in node pool {name}: lower "
                f"theirs first.")
    if errors:
        raise ValidationError(errors)


def cluster_test_connection(*, cluster: Cluster, actor) -> tuple[bool, str]:
    """Ask the cluster's API server for its version now; (reached, what it said or why not). A success marks the
    cluster Connected, as a sync round would; a failure is only reported (the sync decides Disconnected)."""
    try:
        info = kube.version(kube.connect(cluster))
    except kube.ClusterError as exc:
        return False, f"not reachable: {exc}"
    Cluster.objects.filter(pk=cluster.pk).update(status=Cluster.Status.CONNECTED, last_seen_at=timezone.now(),
                                                 status_message="")
    return True, f"connected, Kubernetes {info['gitVersion'] or 'version unknown'}."


def _scope_target(*, scope_type: str, scope_id: str) -> dict:
    """The row an access rule's scope names, as the rule's foreign key; a missing one is a 400."""
    models_of = {AccessRule.Scope.PROJECT: ("project", Project), AccessRule.Scope.DEPARTMENT: ("department", Department),
                 AccessRule.Scope.CLUSTER: ("cluster", Cluster)}
    if scope_type in AccessRule.TENANT_WIDE:
        return {}
    field, model = models_of[scope_type]
    try:
        target = model.objects.filter(pk=scope_id).first()
    except (ValueError, ValidationError):
        target = None
    if target is None:
        raise ValidationError({"scopeId": f"No {scope_type} with id {scope_id!r}."})
    return {field: target}


def access_rule_create(*, actor, subject_type: str, subject_id: str, role: Role, scope_type: str, scope_id: str,
                       user=None) -> AccessRule:
    """Grant `role` to a subject in a scope. A user subject must exist (named by username, email or id), and so
    must a service account (named by its client id or id)."""
    if subject_type == AccessRule.Subject.USER:
        if user is None:
            from studio.selectors import user_by_subject_id

            user = user_by_subject_id(subject_id)
        if user is None:
            raise ValidationError({"subjectId": f"No user {subject_id!r}."})
        subject_id = user.username
    elif subject_type == AccessRule.Subject.SERVICE_ACCOUNT:
        from studio.iam.selectors import service_account_by_subject_id

        account = service_account_by_subject_id(subject_id)
        if account is None:
            raise ValidationError({"subjectId": f"No service account {subject_id!r}."})
        user, subject_id = account.user, account.client_id
    scope_id = str(scope_id)
    target = _scope_target(scope_type=scope_type, scope_id=scope_id)
    rule = AccessRule(subject_type=subject_type, subject_id=subject_id, user=user, role=role, scope_type=scope_type,
                      scope_id=scope_id, created_by=getattr(actor, "username", "") or "", **target)
    return _save(rule, actor=actor, action=AuditEvent.Action.CREATE)


def access_rule_delete(rule: AccessRule, *, actor) -> None:
    model_delete(rule, actor=actor)


def project_members_rules(project: Project, user):
    """The user's own project-scope rules on the project (what the members API shows as one member)."""
    return AccessRule.objects.filter(scope_type=AccessRule.Scope.PROJECT, project=project,
                                     subject_type=AccessRule.Subject.USER, user=user)


def membership_set(*, actor, project: Project, user, role: str) -> AccessRule:
    """Give the user the level `role` in the project: one project-scope access rule of the level's default
    role (an existing rule of that level is kept), replacing the user's other rules on this project."""
    with transaction.atomic():
        rules = list(project_members_rules(project, user).select_related("role"))
        keep = next((rule for rule in rules if rule.role.level == role), None)
        for rule in rules:
            if rule is not keep:
                model_delete(rule, actor=actor)
        if keep is not None:
            return keep
        default = Role.objects.get(name=DEFAULT_ROLE_OF_LEVEL[role])
        return access_rule_create(actor=actor, subject_type=AccessRule.Subject.USER, subject_id=user.username,
                                  user=user, role=default, scope_type=AccessRule.Scope.PROJECT, scope_id=str(project.pk))


def _scope_rules(user, *, project: Project | None, department: Department | None):
    if project is not None:
        return project_members_rules(project, user)
    return AccessRule.objects.filter(scope_type=AccessRule.Scope.DEPARTMENT, department=department,
                                     subject_type=AccessRule.Subject.USER, user=user)


def scope_role_set(*, actor, user, role: Role, project: Project | None = None,
                   department: Department | None = None) -> AccessRule:
    """Give the user exactly `role` (any of Run:ai's predefined roles) in a project or a department: one access rule
    of that role at that scope, replacing the user's other rules there (an existing one of that role is kept)."""
    if (project is None) == (department is None):
        raise ValueError("Name a project or a department.")
    with transaction.atomic():
        rules = list(_scope_rules(user, project=project, department=department))
        keep = next((rule for rule in rules if rule.role_id == role.pk), None)
        for rule in rules:
            if rule is not keep:
                model_delete(rule, actor=actor)
        if keep is not None:
            return keep
        scope_type, target = ((AccessRule.Scope.PROJECT, project) if project is not None
                              else (AccessRule.Scope.DEPARTMENT, department))
        return access_rule_create(actor=actor, subject_type=AccessRule.Subject.USER, subject_id=user.username,
                                  user=user, role=role, scope_type=scope_type, scope_id=str(target.pk))


def scope_role_remove(*, actor, user, department: Department) -> None:
    """Take the user's department-scope rules on the department away (projects: `membership_remove`)."""
    with transaction.atomic():
        for rule in _scope_rules(user, project=None, department=department):
            model_delete(rule, actor=actor)


def membership_remove(*, actor, project: Project, user) -> None:
    """Take the user out of the project: delete the user's project-scope rules there."""
    with transaction.atomic():
        for rule in project_members_rules(project, user):
            model_delete(rule, actor=actor)


def membership_level(rules) -> str | None:
    """The highest level among rules (with their roles loaded)."""
    levels = [rule.role.level for rule in rules]
    return max(levels, key=LEVEL_RANK.get) if levels else None


# --- users (Run:ai's Users tag) -----------------------------------------------------------------------------

def _temporary_password() -> str:
    return secrets.token_urlsafe(12)


def user_create(*, actor, email: str) -> tuple:
    """A local user named by its email, with a temporary password shown once: (user, password)."""
    users = get_user_model().objects
    if users.filter(username=email).exists() or users.filter(email__iexact=email).exists():
        raise Conflict(f"A user {email!r} already exists.")
    password = _temporary_password()
    user = users.model(username=email, email=email)
    user.set_password(password)
    with transaction.atomic():
        _save(user, actor=actor, action=AuditEvent.Action.CREATE)
        passwords.mark_temporary(user)
    return user, password


def user_delete(user, *, actor) -> None:
    if user.pk == getattr(actor, "pk", None):
        raise ValidationError({"userId": "You cannot delete yourself."})
    model_delete(user, actor=actor)


def user_password_reset(user, *, actor) -> str:
    """Give the user a new temporary password (answered once, stored hashed)."""
    password = _temporary_password()
    before = snapshot(user)
    user.set_password(password)
    with transaction.atomic():
        user.save(update_fields=["password"])
        passwords.mark_temporary(user)
        audit_record(actor=actor, action=AuditEvent.Action.UPDATE, instance=user, before=before, extra=PASSWORD_CHANGED)
    return password


# The password's hash is masked in the trail alike before and after, so a change would record no field: this marks
# it as changed (masked all the same).
PASSWORD_CHANGED = {"password": "changed"}


KEYS_FROM_CLIENTS = ("Access keys are made by a user who logged in (password or single sign-on), not with a client's "
                     "id and secret: a key made with an access key's token would outlive that key's deletion.")


def access_key_create(*, user, name: str, by_client: bool = False) -> tuple:
    """A client id and secret for the user (client_credentials); the secret is returned once, stored hashed.
    `by_client`: the request came with a token of a client_credentials grant (an access key, a service account),
    which may not make keys: deleting the key (or disabling the account) must end everything it gave."""
    if by_client:
        raise exceptions.PermissionDenied(KEYS_FROM_CLIENTS)
    key, secret = AccessKey.issue(user=user, name=name)
    audit_record(actor=user, action=AuditEvent.Action.CREATE, instance=key)
    return key, secret


def user_set_active(user, *, actor, active: bool) -> None:
    """Deactivate (the user can no longer log in or use tokens; rules and history stay) or reactivate."""
    if not active and user.pk == getattr(actor, "pk", None):
        raise ValidationError({"userId": "You cannot deactivate yourself."})
    model_update(user, actor=actor, is_active=active)


def user_platform_admin_set(user, *, actor, admin: bool) -> None:
    """Grant or take the platform admin role: the user's own "System administrator" rule at tenant scope.
    Admin through a group or as a superuser is not changed here (the page says so)."""
    role = Role.objects.get(name=PLATFORM_ADMIN_ROLE)
    rules = AccessRule.objects.filter(subject_type=AccessRule.Subject.USER, user=user, role=role,
                                      scope_type=AccessRule.Scope.TENANT)
    if admin and not rules.exists():
        access_rule_create(actor=actor, subject_type=AccessRule.Subject.USER, subject_id=user.username, user=user,
                           role=role, scope_type=AccessRule.Scope.TENANT, scope_id=str(AccessRule.TENANT_ID))
    elif not admin:
        if user.pk == getattr(actor, "pk", None):
            raise ValidationError({"userId": "You cannot take the platform admin role from yourself."})
        for rule in rules:
            model_delete(rule, actor=actor)


def me_password_change(*, user, current_password: str, new_password: str) -> None:
    """Change one's own password: the current one must be right, the new one pass the password validators."""
    if not user.check_password(current_password):
        raise ValidationError({"currentPassword": "This is not your current password."})
    try:
        validate_password(new_password, user=user)
    except ValidationError as exc:
        raise ValidationError({"newPassword": exc.messages}) from exc
    before = snapshot(user)
    user.set_password(new_password)
    with transaction.atomic():
        user.save(update_fields=["password"])
        passwords.clear_temporary(user)
        audit_record(actor=user, action=AuditEvent.Action.UPDATE, instance=user, before=before, extra=PASSWORD_CHANGED)


# --- clusters and node pools ----------------------------------------------------------------------------------

def cluster_create(*, actor, **fields) -> Cluster:
    """A cluster and its `default` node pool (every node)."""
    with transaction.atomic():
        cluster = model_create(Cluster, actor=actor, **fields)
        NodePool.objects.create(cluster=cluster, name=DEFAULT_NODE_POOL, is_default=True,
                                created_by=getattr(actor, "username", ""))
    return cluster


def node_pool_create(*, actor, cluster: Cluster, name: str, label_key: str = NODE_POOL_LABEL,
                     label_value: str | None = None, **settings) -> NodePool:
    """A pool of the cluster's nodes that carry `label_key=label_value` (by default run.ai/node-pool=<name>)."""
    if name == DEFAULT_NODE_POOL or NodePool.objects.filter(cluster=cluster, name=name).exists():
        raise Conflict(f"Cluster {cluster.name} has a node pool {name!r} already.")
    pool = NodePool(cluster=cluster, name=name, label_key=label_key, label_value=label_value or name,
                    created_by=getattr(actor, "username", ""), updated_by=getattr(actor, "username", ""), **settings)
    return _save(pool, actor=actor, action=AuditEvent.Action.CREATE)


NODE_POOL_SETTINGS = ("label_key", "label_value", "over_provisioning_ratio", "gpu_network_acceleration_detection")


def node_pool_update(pool: NodePool, *, actor, **fields) -> NodePool:
    """Change a pool's node label and Run:ai's settings (NodepoolUpdateFields); its name and cluster stay (the
    projects' and departments' quotas name it). The default pool has no label: every node not in another pool."""
    unknown = sorted(set(fields) - set(NODE_POOL_SETTINGS))
    if unknown:
        raise ValidationError({name: "A node pool's name and cluster cannot change." for name in unknown})
    if pool.is_default and any(fields.get(k) for k in ("label_key", "label_value")):
        raise ValidationError({"labelKey": "The default node pool has no label: it holds every node no other pool "
                                           "labels."})
    return model_update(pool, actor=actor, updated_by=_username(actor), **fields)


def node_pool_delete(pool: NodePool, *, actor) -> None:
    if pool.is_default:
        raise ValidationError({"nodepoolId": "The default node pool cannot be deleted."})
    def holders(units) -> list[str]:
        return sorted(u.name for u in units if any(isinstance(r, dict) and (r.get("nodePool") or {}).get("name")
                                                   == pool.name for r in u.node_pool_resources or ()))
    projects = holders(Project.objects.filter(cluster_id=pool.cluster_id))
    departments = holders(Department.objects.filter(Q(cluster_id=pool.cluster_id) | Q(projects__cluster_id=pool.cluster_id))
                          .distinct())
    if projects or departments:
        held = [f"{noun(names, kind)} {', '.join(names)}" for kind, names in (("project", projects),
                                                                            ("department", departments)) if names]
        raise Conflict(f"Node pool {pool.name} holds quotas of {' and '.join(held)}: move them to another pool "
                       f"first.")
    model_delete(pool, actor=actor)
