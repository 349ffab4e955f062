"""Single sign-on for the CLI (`studio login --sso`), as OAuth's device authorization grant (RFC 8628) names it:

- `POST /api/v1/cli/device`: a pair of codes; the CLI shows the user code and the page's address, and polls
- `/cli/device` (verification_uri): the portal's page where the signed-in user (password or the identity
  provider's single sign-on, as any page) enters or follows the code, sees what asked, and approves or denies
- `POST /api/v1/cli/device/token` with `device_code`: RFC 8628's errors (400 `authorization_pending`,
  `slow_down`, `access_denied`, `expired_token`; `invalid_grant` for a code unknown or used) with our
  `code`/`message` beside them, then once a bearer token of the user who approved (OAuth's field names).

The codes, their lifetimes and the polling rules are studio/iam/device_codes.py's. Both endpoints are public (the
CLI has no token yet); starting a sign-in is throttled per client address, trying user codes per signed-in user."""

from __future__ import annotations

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.shortcuts import render
from django.urls import reverse
from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.parsers import FormParser
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.throttling import SimpleRateThrottle
from rest_framework.views import APIView

from studio.errors import VALIDATION_MESSAGE, error_body, flatten_errors
from studio.iam.device_codes import (
    DeviceGrantError,
    cli_device_decide,
    cli_device_pending,
    cli_device_start,
    cli_device_token,
    normalised_user_code,
    shown_user_code,
)
from studio.parsers import JSONParser

TAG = "Researcher Command Line Interface"
DEVICE_GRANT = "urn:ietf:params:oauth:grant-type:device_code"


class DeviceClientThrottle(SimpleRateThrottle):
    scope = "cli-device"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": self.get_ident(request)}


class DeviceEntryThrottle(SimpleRateThrottle):
    scope = "cli-device-entry"

    def get_cache_key(self, request, view):
        return self.cache_format % {"scope": self.scope, "ident": f"user:{request.user.pk}"}


class DeviceRequestSerializer(serializers.Serializer):
    client_id = serializers.CharField(required=False, max_length=100,
                                      help_text="RFC 8628's; any value (the CLI is a public client).")
    client_name = serializers.CharField(required=False, allow_blank=True, max_length=100,
                                        help_text="What the client says it is (shown on the approval page).")
    scope = serializers.CharField(required=False, allow_blank=True, max_length=200)


class DeviceTokenRequestSerializer(serializers.Serializer):
    device_code = serializers.CharField(max_length=200)
    grant_type = serializers.ChoiceField(choices=[DEVICE_GRANT], required=False)
    client_id = serializers.CharField(required=False, max_length=100)


DEVICE_RESPONSE = inline_serializer("CliDeviceAuthorization", {
    "device_code": serializers.CharField(), "user_code": serializers.CharField(),
    "verification_uri": serializers.URLField(), "verification_uri_complete": serializers.URLField(),
    "expires_in": serializers.IntegerField(), "interval": serializers.IntegerField()})
TOKEN_RESPONSE = inline_serializer("CliDeviceToken", {
    "access_token": serializers.CharField(), "token_type": serializers.CharField(),
    "expires_in": serializers.IntegerField()})


def _oauth_error(error: str, description: str, errors: list | None = None) -> Response:
    message = VALIDATION_MESSAGE if error == "invalid_request" else description
    return Response({"error": error, "error_description": description, **error_body(400, message, errors=errors)},
                    status=400)


def _parsed(request, serializer_class):
    """The body's fields checked, or the Response naming each problem (OAuth's invalid_request)."""
    try:
        serializer = serializer_class(data=request.data)
    except exceptions.ParseError as exc:
        return None, _oauth_error("invalid_request", str(exc.detail), [{"field": "", "message": str(exc.detail)}])
    if not serializer.is_valid():
        errors = flatten_errors(serializer.errors)
        return None, _oauth_error("invalid_request", "; ".join(f"{e['field']}: {e['message']}" for e in errors),
                                  errors)
    return serializer.validated_data, None


class _DeviceView(APIView):
    authentication_classes = []  # the CLI has no token yet; a stale one in the header must not make this a 401
    permission_classes = [AllowAny]
    parser_classes = [FormParser, JSONParser]  # RFC 8628's form fields, or JSON


class DeviceView(_DeviceView):
    throttle_classes = [DeviceClientThrottle]

    @extend_schema(operation_id="cli_device_authorization", tags=[TAG], auth=[], request=DeviceRequestSerializer,
                   summary="Start the CLI's single sign-on: a device code and a user code (RFC 8628).",
                   responses={200: DEVICE_RESPONSE, 400: OpenApiResponse(description="A field's problem."),
                              429: OpenApiResponse(description="Too many sign-ins from this address.")})
    def post(self, request):
        data, refused = _parsed(request, DeviceRequestSerializer)
        if refused:
            return refused
        codes = cli_device_start(client_name=data.get("client_name", ""),
                                 client_address=DeviceClientThrottle().get_ident(request),
                                 client_agent=request.META.get("HTTP_USER_AGENT", ""))
        page = request.build_absolute_uri(reverse("cli-device"))
        return Response({
            "device_code": codes.device_code, "user_code": codes.user_code, "verification_uri": page,
            "verification_uri_complete": f"{page}?{urlencode({'user_code': codes.user_code})}",
            "expires_in": codes.expires_in, "interval": codes.authorization.interval})


class DeviceTokenView(_DeviceView):
    @extend_schema(operation_id="cli_device_token", tags=[TAG], auth=[], request=DeviceTokenRequestSerializer,
                   summary="The CLI's poll: a bearer token once the user approved (RFC 8628).",
                   responses={200: TOKEN_RESPONSE, 400: OpenApiResponse(description=(
                       "`error`: authorization_pending, slow_down (wait 5 s more between polls), access_denied, "
                       "expired_token, invalid_grant (unknown or used), invalid_request."))})
    def post(self, request):
        data, refused = _parsed(request, DeviceTokenRequestSerializer)
        if refused:
            return refused
        try:
            token = cli_device_token(device_code=data["device_code"])
        except DeviceGrantError as exc:
            return _oauth_error(exc.error, str(exc))
        return Response({"access_token": token["accessToken"], "token_type": token["tokenType"],
                         "expires_in": token["expiresIn"]})


def device_urls() -> list:
    from django.urls import path

    return [path("cli/device", DeviceView.as_view(), name="cli-device-authorization"),
            path("cli/device/token", DeviceTokenView.as_view(), name="cli-device-token")]


# --- the page -------------------------------------------------------------------------------------------------

def _throttled(request) -> int | None:
    throttle = DeviceEntryThrottle()
    if throttle.allow_request(request, None):
        return None
    return int(throttle.wait() or 1) + 1


@login_required
def device_page(request):
    """Enter the CLI's code (or follow the link that carries it), see what asked, approve or deny."""
    code = (request.POST if request.method == "POST" else request.GET).get("user_code", "")
    context = {"user_code": code}
    status = 200
    if code:
        wait = _throttled(request)
        if wait is not None:
            context["problem"] = f"Too many codes tried. Try again in {wait} seconds."
            response = render(request, "studio/cli_device.html", context, status=429)
            response["Retry-After"] = str(wait)
            return response
        shown = shown_user_code(normalised_user_code(code))
        decision = request.POST.get("decision") if request.method == "POST" else None
        if decision in ("approve", "deny"):
            decided = cli_device_decide(user_code=code, user=request.user, approve=decision == "approve")
            if decided is not None:
                return render(request, "studio/cli_device.html", {"decided": decided, "user_code": shown})
        else:
            pending = cli_device_pending(user_code=code)
            if pending is not None:
                return render(request, "studio/cli_device.html", {"pending": pending, "user_code": shown})
        context["problem"] = (f"No sign-in waits for the code {code[:20]}: it is mistyped, expired, or was approved "
                              "or denied already. Start again with `studio login --sso` if needed.")
        status = 400 if request.method == "POST" else 200
    return render(request, "studio/cli_device.html", context, status=status)
