"""Run:ai's `Registry` tag (2.18 and latest): `/api/v1/asset/registries` and `/{AssetId}`, its `repositories` and
their `tags`, read from the registry itself (assets/registries.py). Codes as both documents give them: create 201,
update 200, delete 204. An answer's `spec.password` is `PASSWORD_MASK`, never the password (Run:ai's schema
requires the field); an update may echo it back to keep the password, or give a new one."""

import re

from django.db import transaction
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from assets import api, api_schemas, registries, selectors, services
from assets.models import Asset
from assets.specs import REGISTRY, spec_problems

KIND = "registry"
TAG = "Registry"
PASSWORD_MASK = "********"
REPOSITORY = re.compile(r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*")


def registry_answer(asset: Asset) -> dict:
    answer = selectors.asset_answer(asset)
    answer["spec"] = {"url": asset.spec.get("url"), "credentialKind": asset.spec.get("credentialKind") or "password",
                      "user": asset.spec.get("user"), "password": PASSWORD_MASK}
    return answer


def _spec_update(asset: Asset, spec) -> tuple[dict | None, str | None]:
    """(new public spec, new password or None to keep it) from an update's optional spec; problems are a 400."""
    if spec is None:
        return None, None
    if not isinstance(spec, dict):
        raise ValidationError({"spec": ["Must be an object."]})
    password = spec.get("password")
    merged = {**asset.spec, **{k: v for k, v in spec.items() if k != "password" and v is not None},
              "password": password if password not in (None, PASSWORD_MASK) else "kept"}
    problems = spec_problems(KIND, merged)
    problems += [(f"spec.{key}", "Is not a field of this object.") for key in spec if key not in REGISTRY]
    if problems:
        detail: dict = {}
        for path, message in problems:
            detail.setdefault(path, []).append(message)
        raise ValidationError(detail)
    public = {k: v for k, v in merged.items() if k != "password"}
    return public, (password if password not in (None, PASSWORD_MASK) else None)


class RegistryListView(api.AssetListView):
    kinds = (KIND,)

    @extend_schema(operation_id="list_registries", tags=[TAG], parameters=[
        OpenApiParameter("name", OpenApiTypes.STR, description="Only the registries of this name.")],
        responses={200: {"type": "object", "required": ["entries"], "properties": {
            "entries": {"type": "array", "items": api_schemas.asset_schema(KIND)}}}})
    def get(self, request):
        query, _ = api.list_query(request)
        found = selectors.asset_list(user=request.user, kinds=self.kinds, query=query)
        return Response({"entries": [registry_answer(a) for a in found]})

    @extend_schema(operation_id="create_registry", tags=[TAG],
                   request={"application/json": api_schemas.creation_schema(KIND)},
                   responses={201: api_schemas.asset_schema(KIND)})
    def post(self, request):
        asset = services.asset_create(actor=request.user, kind=KIND, body=request.data)
        return Response(registry_answer(asset), status=201)


class RegistryView(APIView):
    @extend_schema(operation_id="get_registry_by_id", tags=[TAG], responses={200: api_schemas.asset_schema(KIND)})
    def get(self, request, AssetId):  # noqa: N803 — Run:ai's name of the path parameter
        return Response(registry_answer(api.visible(request, KIND, AssetId)))

    @extend_schema(operation_id="update_registry", tags=[TAG],
                   request={"application/json": api_schemas.update_schema(KIND)},
                   responses={200: api_schemas.asset_schema(KIND)})
    def put(self, request, AssetId):  # noqa: N803
        asset = api.visible(request, KIND, AssetId)
        data = request.data if isinstance(request.data, dict) else None
        if data is None:
            raise ValidationError({"": ["The body must be a JSON object with meta (and spec)."]})
        public, password = _spec_update(asset, data.get("spec"))
        with transaction.atomic():
            asset = services.asset_update(actor=request.user, asset=asset,
                                          body={k: v for k, v in data.items() if k != "spec"})
            if public is not None:
                services.registry_login_set(asset=asset, spec=public, password=password)
        return Response(registry_answer(asset), status=200)

    @extend_schema(operation_id="delete_registry", tags=[TAG], responses={204: None})
    def delete(self, request, AssetId):  # noqa: N803
        services.asset_delete(actor=request.user, asset=api.visible(request, KIND, AssetId))
        return Response(status=204)


def _search(request) -> str | None:
    return request.query_params.get("searchName") or None


class RepositoriesView(APIView):
    @extend_schema(operation_id="get_repositories", tags=[TAG], parameters=[
        OpenApiParameter("searchName", OpenApiTypes.STR, description="Only the repositories containing this text.")],
        responses={200: {"type": "object", "required": ["repositories"], "properties": {
            "repositories": {"type": "array", "items": {"type": "string"}}}}})
    def get(self, request, AssetId):  # noqa: N803
        asset = api.visible(request, KIND, AssetId)
        return Response({"repositories": registries.repositories(registries.login_of(asset),
                                                                 search=_search(request))})


class RepositoryTagsView(APIView):
    @extend_schema(operation_id="get_repository_tags", tags=[TAG], parameters=[
        OpenApiParameter("repository", OpenApiTypes.STR, required=True,
                         description="The repository whose tags are listed."),
        OpenApiParameter("searchName", OpenApiTypes.STR, description="Only the tags containing this text.")],
        responses={200: {"type": "object", "required": ["name", "tags"], "properties": {
            "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}}}}})
    def get(self, request, AssetId):  # noqa: N803
        asset = api.visible(request, KIND, AssetId)
        repository = request.query_params.get("repository")
        if not repository:
            raise ValidationError({"repository": ["This field is required."]})
        if len(repository) > 255 or not REPOSITORY.fullmatch(repository):
            raise ValidationError({"repository": ["Must be a repository name: lowercase path components of "
                                                  "letters and digits separated by '.', '_', '__' or '-'."]})
        found = registries.tags(registries.login_of(asset), repository, search=_search(request))
        return Response({"name": repository, "tags": found})
