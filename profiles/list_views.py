"""The CSV export and bulk delete of the service profiles and environment templates lists (profiles.tables):
platform admins only, over what they may see, each delete through the single delete's service."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.core.exceptions import ValidationError as DjangoValidationError
from django.http import HttpResponseRedirect, JsonResponse
from django.urls import reverse
from django.views.decorators.http import require_POST
from rest_framework.exceptions import APIException
from rest_framework.exceptions import ValidationError as InvalidQuery

from profiles import selectors, services
from profiles.forms import api_errors
from profiles.tables import ProfileTable, TemplateTable, profile_rows, template_rows
from studio.ids import is_id, parse_id
from studio.models import is_platform_admin
from studio.tables import bulk_run, bulk_target


def _admin_only(request):
    if not is_platform_admin(request.user):
        raise PermissionDenied


def _problem(exc):
    if isinstance(exc, (DjangoValidationError, APIException)):
        return " ".join(error["message"] for error in api_errors(exc))
    return None


def _export(request, table):
    _admin_only(request)
    try:
        return table.export()
    except InvalidQuery as exc:
        return JsonResponse(exc.detail, status=400)


@login_required
def profile_export(request):
    return _export(request, ProfileTable(request, profile_rows(selectors.profiles_visible_to(request.user))))


@login_required
def template_export(request):
    return _export(request, TemplateTable(request, template_rows(selectors.templates_visible_to(request.user))))


def _chosen(request, queryset) -> tuple[dict, list[str]]:
    ids = [i for i in request.POST.getlist("ids") if is_id(i)]
    return {str(row.pk): row for row in queryset.filter(pk__in=[parse_id(i) for i in ids])}, ids


@login_required
@require_POST
def profile_bulk(request):
    _admin_only(request)
    target = bulk_target(request, reverse("profile-list"))
    rows, ids = _chosen(request, selectors.profiles_visible_to(request.user))
    if request.POST.get("action") == "delete" and ids:
        bulk_run(request, rows=rows, ids=ids, problem=_problem, done_text="Deleted",
                 nouns=("service profile", "service profiles"),
                 act=lambda row: services.profile_delete(actor=request.user, profile=row))
    return HttpResponseRedirect(target)


@login_required
@require_POST
def template_bulk(request):
    _admin_only(request)
    target = bulk_target(request, reverse("template-list"))
    rows, ids = _chosen(request, selectors.templates_visible_to(request.user))
    if request.POST.get("action") == "delete" and ids:
        bulk_run(request, rows=rows, ids=ids, problem=_problem, done_text="Deleted",
                 nouns=("environment template", "environment templates"),
                 act=lambda row: services.template_delete(actor=request.user, template=row))
    return HttpResponseRedirect(target)
