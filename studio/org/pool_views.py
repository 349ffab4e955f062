"""A cluster's node pools on the portal (platform admins): listed, created, edited and deleted through the same
services as `/api/v1/node-pools`. A refused deletion (quotas still name the pool) says which projects and
departments hold quota there."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied, ValidationError
from django.http import HttpResponseRedirect
from django.shortcuts import get_object_or_404, render
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import APIException

from studio import services
from studio.clusters.models import Cluster, NodePool
from studio.iam.models import is_platform_admin
from studio.org.forms import NodePoolForm

# The service's error keys (the API's field names) -> the form's fields.
FIELDS = {"labelKey": "label_key", "labelValue": "label_value", "name": "name"}


def _admin_only(request):
    if not is_platform_admin(request.user):
        raise PermissionDenied


def _run(form, save) -> bool:
    try:
        save()
        return True
    except ValidationError as exc:
        for key, errors in (exc.message_dict if hasattr(exc, "error_dict") else {None: exc.messages}).items():
            field = FIELDS.get(key, key)
            form.add_error(field if field in form.fields else None, errors)
    except APIException as exc:
        form.add_error(None, str(exc.detail))
    return False


@login_required
def node_pools(request, pk):
    _admin_only(request)
    cluster = get_object_or_404(Cluster, pk=pk)
    form = NodePoolForm(request.POST or None, initial={"label_key": "run.ai/node-pool"})
    if request.method == "POST" and form.is_valid():
        data = form.cleaned_data
        if _run(form, lambda: services.node_pool_create(
                actor=request.user, cluster=cluster, name=data["name"], label_key=data["label_key"],
                label_value=data["label_value"], over_provisioning_ratio=data["over_provisioning_ratio"],
                gpu_network_acceleration_detection=data["gpu_network_acceleration_detection"])):
            messages.success(request, f"Created node pool {data['name']} on {cluster.name}.")
            return HttpResponseRedirect(request.path)
    return render(request, "studio/node_pools.html", {
        "cluster": cluster, "pools": NodePool.objects.filter(cluster=cluster), "form": form})


@login_required
def node_pool_edit(request, pk, pool_id):
    _admin_only(request)
    pool = get_object_or_404(NodePool.objects.select_related("cluster"), cluster_id=pk, pk=pool_id)
    form = NodePoolForm(request.POST or None, instance=pool)
    if request.method == "POST" and form.is_valid():
        fields = {name: form.cleaned_data[name] for name in form.changed_data}
        fresh = NodePool.objects.get(pk=pool.pk)  # the form wrote its values onto `pool`
        if _run(form, lambda: services.node_pool_update(fresh, actor=request.user, **fields)):
            messages.success(request, f"Saved node pool {fresh.name}.")
            return HttpResponseRedirect(reverse("node-pools", args=[pk]))
    return render(request, "studio/node_pool_edit.html", {"pool": NodePool.objects.get(pk=pool.pk), "form": form})


@login_required
@require_POST
def node_pool_delete(request, pk, pool_id):
    _admin_only(request)
    pool = get_object_or_404(NodePool, cluster_id=pk, pk=pool_id)
    try:
        services.node_pool_delete(pool, actor=request.user)
        messages.success(request, f"Deleted node pool {pool.name}.")
    except ValidationError as exc:
        messages.error(request, " ".join(exc.messages))
    except APIException as exc:
        messages.error(request, f"Refused: {exc.detail}")
    return HttpResponseRedirect(reverse("node-pools", args=[pk]))
