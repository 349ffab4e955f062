"""A channel's configuration, per type: its fields (Run:ai's EmailNotificationChannelConfig and
SlackNotificationChannelConfig; our webhook's), which of them are secrets (stored encrypted, never answered), and
the network rules every address it names must pass (studio.addresses, as cluster URLs), when saved and again when
used."""

import socket

from rest_framework import serializers

from studio.addresses import address_problem
from studio.outbound import OutboundRefused, check
from studio.serializers import StrictSerializer

TOKEN = r"^[\x21-\x7e]+$"  # what an HTTP header or an SMTP login can carry: printable ASCII
TOKEN_RULE = {"invalid": "Printable ASCII characters without spaces."}
PRINTABLE = r"^[\x20-\x7e]*$"
PRINTABLE_RULE = {"invalid": "Printable ASCII characters (an SMTP login carries nothing else)."}
SECRET_FIELDS = {"email": ("password",), "slack": ("apiToken", "webhookUrl"), "webhook": ("secret",)}
DEFAULT_SUBJECT = "PaaS Studio notification - {{ .category }} {{ .reason }}"


class EmailConfig(StrictSerializer):
    smtpHost = serializers.CharField(max_length=253)
    smtpPort = serializers.IntegerField(min_value=1, max_value=65535, default=587)
    username = serializers.RegexField(PRINTABLE, max_length=254, required=False, allow_blank=True,
                                      error_messages=PRINTABLE_RULE)
    password = serializers.RegexField(PRINTABLE, max_length=1024, required=False, allow_blank=True,
                                      error_messages=PRINTABLE_RULE)
    authType = serializers.ChoiceField(["auth_login", "auth_plain", "auth_none", ""], default="auth_login")
    smtpTlsEnabled = serializers.BooleanField(required=False, allow_null=True)
    # `from`, a Python keyword: declared under its name in __init__
    recipients = serializers.ListField(child=serializers.EmailField(), default=list, max_length=100)
    fromDisplayName = serializers.CharField(max_length=100, default="PaaS Studio")
    directNotifications = serializers.BooleanField(required=False, allow_null=True)
    useAttachments = serializers.BooleanField(required=False, allow_null=True)
    subject = serializers.CharField(max_length=300, default=DEFAULT_SUBJECT)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["from"] = serializers.EmailField()

    def validate(self, attrs):
        if attrs.get("authType") in ("auth_login", "auth_plain") and not (attrs.get("username")
                                                                          and attrs.get("password")):
            raise serializers.ValidationError({"username": ["A username and a password are needed with "
                                                            f"{attrs['authType']}; use auth_none for none."]})
        return attrs


class SlackConfig(StrictSerializer):
    apiToken = serializers.RegexField(TOKEN, max_length=500, required=False, allow_blank=True,
                                      error_messages=TOKEN_RULE)
    recipients = serializers.ListField(child=serializers.CharField(max_length=100), default=list, max_length=100)
    directNotifications = serializers.BooleanField(required=False, allow_null=True)
    webhookUrl = serializers.URLField(max_length=2000, required=False, allow_blank=True)

    def validate(self, attrs):
        if not attrs.get("webhookUrl") and not (attrs.get("apiToken") and attrs.get("recipients")):
            raise serializers.ValidationError({"apiToken": ["Give an apiToken and recipients (Slack channels), "
                                                            "or a webhookUrl."]})
        return attrs


class WebhookConfig(StrictSerializer):
    url = serializers.URLField(max_length=2000)
    secret = serializers.CharField(min_length=16, max_length=500, help_text="The key of the HMAC-SHA256 signature.")


SERIALIZERS = {"email": EmailConfig, "slack": SlackConfig, "webhook": WebhookConfig}


def smtp_host_check(field: str, host: str, port: int) -> None:
    """OutboundRefused unless every address the SMTP host resolves to may be reached (as a cluster URL's)."""
    try:
        addresses = sorted({info[4][0] for info in socket.getaddrinfo(host, port)})
    except (OSError, UnicodeError):
        return  # not resolvable now: checked again when used
    for address in addresses:
        problem = address_problem(address.split("%", 1)[0])
        if problem:
            raise OutboundRefused(field, f"{host} may not be used: {problem}.")


def addresses_check(kind: str, config: dict, secrets: dict) -> None:
    """OutboundRefused (with the field, `config.<name>`) for the first address the rules refuse."""
    if kind == "email":
        smtp_host_check("config.smtpHost", config["smtpHost"], config.get("smtpPort") or 587)
    elif kind == "slack" and secrets.get("webhookUrl"):
        check("config.webhookUrl", secrets["webhookUrl"])
    elif kind == "webhook":
        check("config.url", config["url"])


def validated(kind: str, given: dict) -> tuple[dict, dict]:
    """(config without secrets, secrets) of a complete configuration; a ValidationError naming each
    `config.<field>` that is wrong, or whose address is refused."""
    serializer = SERIALIZERS[kind](data=given)
    if not serializer.is_valid():
        raise serializers.ValidationError({f"config.{name}": problems
                                           for name, problems in serializer.errors.items()})
    values = dict(serializer.validated_data)
    secrets = {name: values.pop(name, None) for name in SECRET_FIELDS[kind]}
    secrets = {name: value for name, value in secrets.items() if value}
    try:
        addresses_check(kind, values, secrets)
    except OutboundRefused as exc:
        raise serializers.ValidationError({exc.field: [exc.reason]}) from None
    return values, secrets
