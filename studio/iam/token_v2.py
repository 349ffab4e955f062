"""Run:ai latest's `POST /api/v2/token`: the v1 grants in OAuth2's form (RFC 6749): `grant_type`, `username`/
`password` or `client_id`/`client_secret`, form-encoded (JSON is taken too), answered as `OAuth2TokenResponse`.
Errors are OAuth2's (`error`, `error_description`) with our `code`/`message`/`errors` beside them, so that each
problem is named as everywhere else in the API. `refresh_token` (a refresh token of ours, used once) and
`authorization_code` (a code the identity provider issued to our client id, exchanged with our client secret;
`code_verifier` where the client used PKCE) are single sign-on's (studio/iam/tokens.py)."""

from drf_spectacular.utils import OpenApiResponse, extend_schema, inline_serializer
from rest_framework import exceptions, serializers
from rest_framework.parsers import FormParser, MultiPartParser
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.views import APIView

from studio.errors import error_body, flatten_errors
from studio.iam import auth
from studio.iam import tokens as iam_tokens
from studio.iam.backends import LOCAL_LOGIN_OFF, local_login_enabled
from studio.iam.throttling import LOGIN_THROTTLES
from studio.parsers import JSONParser

GRANT_FIELDS = {"password": ("username", "password"), "client_credentials": ("client_id", "client_secret"),
                "refresh_token": ("refresh_token",), "authorization_code": ("code", "redirect_uri")}
KNOWN_FIELDS = {"grant_type", "client_id", "client_secret", "username", "password", "refresh_token", "code",
                "redirect_uri", "scope", "code_verifier"}


class TokenV2Request(serializers.Serializer):
    grant_type = serializers.ChoiceField(choices=list(GRANT_FIELDS))
    client_id = serializers.CharField(required=False)
    client_secret = serializers.CharField(required=False, trim_whitespace=False)
    username = serializers.CharField(required=False)
    password = serializers.CharField(required=False, trim_whitespace=False)
    refresh_token = serializers.CharField(required=False)
    code = serializers.CharField(required=False)
    redirect_uri = serializers.CharField(required=False)
    scope = serializers.CharField(required=False)
    code_verifier = serializers.CharField(required=False, max_length=128)


def _oauth_error(status: int, error: str, problems: dict) -> Response:
    errors = flatten_errors(problems)
    description = "; ".join(f"{e['field'] or 'request'}: {e['message']}" for e in errors)
    body = {"error": error, "error_description": description,
            **error_body(status, "There was a validation error in the request." if status == 400 else description,
                         errors=errors)}
    return Response(body, status=status)


def problems_of(data) -> tuple[str, dict]:
    """(OAuth2 error code, {field: [problems]}) of a request body; ("", {}) when it is a grant we can answer."""
    if not hasattr(data, "keys"):
        return "invalid_request", {"": ["The body must be form fields (application/x-www-form-urlencoded)."]}
    unknown = {name: ["Unknown field."] for name in sorted(set(data.keys()) - KNOWN_FIELDS)}
    request = TokenV2Request(data=data)
    valid = request.is_valid()
    problems = {**unknown, **({} if valid else request.errors)}
    grant = request.validated_data.get("grant_type") if valid else None
    for name in GRANT_FIELDS.get(grant, ()):
        if not request.validated_data.get(name):
            problems[name] = [f"This field is required for grant_type {grant}."]
    if problems:
        code = "unsupported_grant_type" if "grant_type" in problems and data.get("grant_type") else "invalid_request"
        return code, problems
    return "", {}


class TokenV2View(APIView):
    authentication_classes = []
    permission_classes = [AllowAny]
    parser_classes = [FormParser, MultiPartParser, JSONParser]
    throttle_classes = LOGIN_THROTTLES

    def get_authenticate_header(self, request):
        return 'Bearer realm="api"'

    @extend_schema(
        tags=["Tokens"], auth=[], request={"application/x-www-form-urlencoded": TokenV2Request},
        summary="Create an access token (OAuth2 form, Run:ai latest).",
        responses={200: inline_serializer("OAuth2TokenResponse", {
            "access_token": serializers.CharField(), "token_type": serializers.CharField(),
            "expires_in": serializers.IntegerField(), "refresh_token": serializers.CharField(required=False)}),
            400: OpenApiResponse(description="OAuth2 error (`error`, `error_description`), each problem named."),
            401: OpenApiResponse(description="OAuth2 `invalid_client` / `invalid_grant`.")},
    )
    def post(self, request):
        try:
            data = request.data
        except exceptions.ParseError as exc:
            return _oauth_error(400, "invalid_request", {"": [str(exc.detail)]})
        error, problems = problems_of(data)
        if problems:
            return _oauth_error(400, error, problems)
        grant = data.get("grant_type")
        try:
            if grant == "password":
                if not local_login_enabled():
                    return _oauth_error(400, "unsupported_grant_type", {"grant_type": [LOCAL_LOGIN_OFF]})
                token = iam_tokens.grant_password(username=data["username"], password=data["password"])
            elif grant == "client_credentials":
                token = auth.grant_client_credentials(client_id=data["client_id"],
                                                      client_secret=data["client_secret"])
            elif grant == "refresh_token":
                token = iam_tokens.grant_refresh(refresh_token=data["refresh_token"])
            else:
                token = iam_tokens.grant_authorization_code(code=data["code"], redirect_uri=data["redirect_uri"],
                                                            code_verifier=data.get("code_verifier", ""))
        except iam_tokens.GrantRefused as exc:
            response = _oauth_error(exc.status, exc.error, {"": [str(exc)]})
            if exc.status == 401:
                response["WWW-Authenticate"] = self.get_authenticate_header(request)
            return response
        except exceptions.AuthenticationFailed as exc:
            error = "invalid_grant" if grant == "password" else "invalid_client"
            response = _oauth_error(401, error, {"": [str(exc.detail)]})
            response["WWW-Authenticate"] = self.get_authenticate_header(request)
            return response
        answer = {"access_token": token["accessToken"], "token_type": token["tokenType"],
                  "expires_in": token["expiresIn"]}
        if token.get("refreshToken"):
            answer["refresh_token"] = token["refreshToken"]
        return Response(answer)
