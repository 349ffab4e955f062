"""Run:ai's workload assets API (tags Environment, Compute, Datasources, PVC, NFS, S3, Git, HostPath, ConfigMap,
Secret, Credentials of runai-openapi-2.18.json and -latest.json) under `/api/v1/asset/...`. Thin views: parse the
query, start from `Asset.objects.visible_to(user)` (outside it, a 404), call one selector or service, answer.

Codes as 2.18 gives them (latest's where only latest has the operation): create and update 202 with the asset;
delete 202 `{"code": 202, "message": "Request has been accepted."}` (a generic secret's and an NGC key's: 204);
an asset in use is a 409 naming what uses it."""

from django.http import Http404
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import ValidationError
from rest_framework.response import Response
from rest_framework.views import APIView

from assets import api_schemas, selectors, services
from assets.models import Asset, Scope
from assets.selectors import DATASOURCE_LIST_KEYS, WORKLOAD_TYPES, ListQuery
from assets.specs import CREDENTIAL_KINDS, DATASOURCE_KINDS
from studio.ids import is_uuid, parse_id
from studio.models import Project

ACCEPTED = {"code": 202, "message": "Request has been accepted."}
FLAGS = ("usageInfo", "statusInfo", "includeDescendants", "isTraining", "isWorkspace", "isInference", "isDistributed")


def _flag(params, name: str, problems: dict) -> bool:
    value = params.get(name)
    if value in (None, ""):
        return False
    if value.lower() not in ("true", "false"):
        problems[name] = ["Must be true or false."]
        return False
    return value.lower() == "true"


def _list_query(request) -> tuple[ListQuery, dict]:
    """Run:ai's list parameters; every bad one is named in one 400. Also answers the compliance question asked."""
    params, problems = request.query_params, {}
    flags = {name: _flag(params, name, problems) for name in FLAGS}
    query = ListQuery(name=params.get("name") or None, usage=flags["usageInfo"],
                      include_descendants=flags["includeDescendants"])
    scope = params.get("scope") or None
    if scope is not None and scope not in Scope.values:
        problems["scope"] = [f"Must be one of {', '.join(Scope.values)}."]
    query.scope = scope
    if scope and query.include_descendants:
        problems["includeDescendants"] = ["Give either scope or includeDescendants, not both."]
    for name in ("projectId", "departmentId", "complyToProject"):
        if params.get(name) and parse_id(params[name]) is None:
            problems[name] = ["Must be an integer id."]
    if params.get("clusterId") and not is_uuid(params["clusterId"]):
        problems["clusterId"] = ["Must be a UUID."]
    ids = [i for i in (params.get("assetIds") or "").split(",") if i] if "assetIds" in params else None
    if ids is not None and not all(is_uuid(i) for i in ids):
        problems["assetIds"] = ["Must be a comma-separated list of UUIDs."]
    kind = params.get("complyToWorkloadType")
    if kind and kind not in WORKLOAD_TYPES:
        problems["complyToWorkloadType"] = [f"Must be one of {', '.join(WORKLOAD_TYPES)}."]
    if params.get("complyToReplicaType") not in (None, "", "Worker", "Master"):
        problems["complyToReplicaType"] = ["Must be Worker or Master."]
    if problems:
        raise ValidationError(problems)
    query.asset_ids = ids
    if params.get("projectId"):
        # A project the caller does not see matches nothing, as one that does not exist.
        query.project = Project.objects.visible_to(request.user).filter(pk=parse_id(params["projectId"])).first()
        query.unknown_unit = query.project is None
    query.department_id = parse_id(params["departmentId"]) if params.get("departmentId") else None
    query.cluster_id = params.get("clusterId") or None
    for flag, workload_type in (("isTraining", "training"), ("isWorkspace", "workspace"),
                                ("isInference", "inference"), ("isDistributed", "distributed")):
        if flags[flag]:
            query.supports = workload_type  # Run:ai's flags ask one type at a time
    query.framework = params.get("distributedFramework") or None
    comply = {}
    if params.get("complyToProject") and kind:
        comply = {"project": Project.objects.visible_to(request.user).filter(
            pk=parse_id(params["complyToProject"])).first(), "type": WORKLOAD_TYPES[kind]}
    return query, comply


def _answers(assets, *, query: ListQuery, comply: dict, listed_in=None) -> list[dict]:
    uses = selectors.uses_of(assets) if query.usage else None
    answers = []
    for asset in assets:
        answer = selectors.asset_answer(asset, uses=uses.get(asset.pk, []) if uses is not None else None,
                                        listed_in=listed_in)
        if comply:
            answer["compliance"] = selectors.compliance(asset, comply["project"], comply["type"])
        answers.append(answer)
    return answers


class AssetListView(APIView):
    kinds: tuple = ()
    listed_in: str | None = None

    def get(self, request):
        query, comply = _list_query(request)
        assets = selectors.asset_list(user=request.user, kinds=self.kinds, query=query)
        return Response({"entries": _answers(assets, query=query, comply=comply, listed_in=self.listed_in)})


class AssetCollectionView(AssetListView):
    def post(self, request):
        asset = services.asset_create(actor=request.user, kind=self.kinds[0], body=request.data)
        return Response(selectors.asset_answer(asset), status=202)


def _visible(request, kind: str, asset_id) -> Asset:
    """The asset of `kind` with that id if the caller sees it; else a 404 (a malformed id too)."""
    asset = None
    if is_uuid(asset_id):
        asset = Asset.objects.visible_to(request.user).filter(kind=kind, pk=asset_id).select_related("project").first()
    if asset is None:
        raise Http404
    return asset


class AssetItemView(APIView):
    kind: str
    delete_status = 202

    def _asset(self, request, asset_id) -> Asset:
        return _visible(request, self.kind, asset_id)

    def get(self, request, AssetId):  # noqa: N803 — Run:ai's name of the path parameter
        asset = self._asset(request, AssetId)
        query, comply = _list_query(request)
        return Response(_answers([asset], query=query, comply=comply)[0])

    def put(self, request, AssetId):  # noqa: N803
        asset = services.asset_update(actor=request.user, asset=self._asset(request, AssetId), body=request.data)
        return Response(selectors.asset_answer(asset), status=202)

    def delete(self, request, AssetId):  # noqa: N803
        services.asset_delete(actor=request.user, asset=self._asset(request, AssetId))
        return Response(ACCEPTED if self.delete_status == 202 else None, status=self.delete_status)


class PvcHistoryView(APIView):
    """latest's `GET …/pvc/{AssetId}/history`: the claim's events and phase changes on its cluster. PaaS Studio
    does not make the claims of PVC assets yet (issue 38's later slice), so no asset has any: an empty page."""

    def get(self, request, AssetId):  # noqa: N803
        _visible(request, "pvc", AssetId)
        problems = {name: ["Must be a non-negative integer."] for name in ("offset", "limit")
                    if request.query_params.get(name) and parse_id(request.query_params[name]) is None}
        if problems:
            raise ValidationError(problems)
        return Response({"records": []})


# (path under /api/v1/asset/, kind, Run:ai's tag, its operation ids: list, create, get, update, delete)
ROUTES = [
    ("environment", "environment", "Environment", "environment_asset"),
    ("compute", "compute", "Compute", "compute_asset"),
    ("datasource/pvc", "pvc", "PVC", "pvc_asset"),
    ("datasource/nfs", "nfs", "NFS", "nfs_asset"),
    ("datasource/s3", "s3", "S3", "s3_asset"),
    ("datasource/git", "git", "Git", "git_asset"),
    ("datasource/host-path", "hostPath", "HostPath", "host_path"),
    ("datasource/config-map", "config-map", "ConfigMap", "config_map_asset"),
    ("datasource/secrets", "secret-volume", "Secret", "secret_asset"),
    ("credentials/access-key", "accessKey", "Credentials", "access_key"),
    ("credentials/password", "password", "Credentials", "password"),
    ("credentials/docker-registry", "dockerRegistry", "Credentials", "docker_registry"),
    ("credentials/generic-secret", "genericSecret", "Credentials", "generic_secret"),
    ("credentials/ngc-api-key", "ngcApiKey", "Credentials", "ngc_api_key"),
]
NO_CONTENT_ON_DELETE = {"genericSecret", "ngcApiKey"}  # 2.18 and latest answer their DELETE with 204


def _own(method):
    """A function of the view's own to document: extend_schema marks the function it is given, and the views
    of every kind share their parents' methods."""
    def call(self, *args, **kwargs):
        return method(self, *args, **kwargs)

    call.__name__ = method.__name__
    return call


def collection_view(kind: str, tag: str, stem: str):
    schema = api_schemas
    view = type(f"{stem.title().replace('_', '')}ListView", (AssetCollectionView,), {"kinds": (kind,)})
    view.get = extend_schema(operation_id=f"list_{stem}s", tags=[tag], parameters=schema.LIST_PARAMETERS,
                             responses={200: schema.list_schema((kind,))})(_own(view.get))
    view.post = extend_schema(operation_id=f"create_{stem}", tags=[tag],
                              request={"application/json": schema.creation_schema(kind)},
                              responses={202: schema.asset_schema(kind)})(_own(view.post))
    return view.as_view()


def item_view(kind: str, tag: str, stem: str):
    schema, deleted = api_schemas, 204 if kind in NO_CONTENT_ON_DELETE else 202
    view = type(f"{stem.title().replace('_', '')}View", (AssetItemView,), {"kind": kind, "delete_status": deleted})
    view.get = extend_schema(operation_id=f"get_{stem}_by_id", tags=[tag], parameters=schema.DETAIL_PARAMETERS,
                             responses={200: schema.asset_schema(kind)})(_own(view.get))
    view.put = extend_schema(operation_id=f"update_{stem}_by_id", tags=[tag],
                             request={"application/json": schema.update_schema(kind)},
                             responses={202: schema.asset_schema(kind)})(_own(view.put))
    view.delete = extend_schema(operation_id=f"delete_{stem}_by_id", tags=[tag],
                                responses={deleted: schema.ACCEPTED if deleted == 202 else None})(_own(view.delete))
    return view.as_view()


def family_view(kinds: tuple, tag: str, listed_in: str, operation_id: str):
    view = type(f"{tag}FamilyView", (AssetListView,), {"kinds": kinds, "listed_in": listed_in})
    key_of = DATASOURCE_LIST_KEYS if listed_in == "datasource" else {k: k for k in kinds}
    view.get = extend_schema(operation_id=operation_id, tags=[tag], parameters=api_schemas.LIST_PARAMETERS,
                             responses={200: api_schemas.list_schema(kinds, key_of)})(_own(view.get))
    return view.as_view()


def history_view():
    view = type("PvcHistoryAnswerView", (PvcHistoryView,), {})
    view.get = extend_schema(operation_id="get_pvc_history", tags=["PVC"], parameters=api_schemas.PAGE_PARAMETERS,
                             responses={200: api_schemas.HISTORY})(_own(view.get))
    return view.as_view()


FAMILIES = [("datasource", DATASOURCE_KINDS, "Datasources", "datasource", "list_datasource_assets"),
            ("credentials", CREDENTIAL_KINDS, "Credentials", "credentials", "list_credentials_assets")]


# For the other asset views of this app (assets/registry_api.py): the same query parsing and the same 404.
list_query = _list_query
visible = _visible
