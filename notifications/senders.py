"""Sending one notification through one channel: e-mail through Django's SMTP backend configured from the channel,
Slack (its incoming webhook, or its Web API's chat.postMessage at NOTIFICATIONS_SLACK_API_URL), and our webhook
(a JSON body signed with HMAC-SHA256). Every HTTP request goes through studio.outbound.fetch, which applies the
network rules at each use; the SMTP host is checked before each connection.

`Refused` is for what retrying cannot fix (an address the rules refuse, Slack's `invalid_auth`); `Failed` for what
may pass later (a server down, a 5xx, a 429). Their messages are ours: never a URL (a Slack webhook's path is its
secret) nor a server's answer."""

import hashlib
import hmac
import json
import logging
import smtplib
import time
from email.utils import formataddr

import requests
from django.conf import settings
from django.core.mail import EmailMessage
from django.core.mail.backends.smtp import EmailBackend

from notifications.catalogue import render_subject
from notifications.channel_config import DEFAULT_SUBJECT, smtp_host_check
from studio.outbound import SMTP, AddressRefused, OutboundRefused, fetch

log = logging.getLogger(__name__)
SIGNATURE_HEADER = "X-Studio-Signature"
TIMESTAMP_HEADER = "X-Studio-Timestamp"


class Refused(Exception):
    pass


class Failed(Exception):
    pass


def signature(secret: str, timestamp: str, body: bytes) -> str:
    """`sha256=<hex>` of HMAC-SHA256 over `<timestamp>.<body>`: a receiver recomputes it with the shared secret
    and refuses an old timestamp (a replay)."""
    digest = hmac.new(secret.encode(), timestamp.encode() + b"." + body, hashlib.sha256).hexdigest()
    return f"sha256={digest}"


def text_of(payload: dict) -> str:
    lines = [payload["title"], payload["message"]]
    workload = payload.get("workload")
    if workload:
        lines.append(f"Workload {workload['name']} ({workload['type']}) of project {workload['projectName']} on "
                     f"cluster {workload['clusterName']}: {workload['phase']}.")
    lines.append(f"At {payload['createdAt']}.")
    return "\n".join(line for line in lines if line)


def _post(url: str, body: bytes, *, field: str, headers: dict) -> requests.Response:
    try:
        response = fetch("POST", url, field=field, timeout=settings.NOTIFICATIONS_TIMEOUT_SECONDS, data=body,
                         headers={"Content-Type": "application/json", **headers})
    except OutboundRefused as exc:
        raise Refused(f"{field}: {exc.reason}") from None
    except requests.RequestException as exc:
        raise Failed(f"{field}: could not be reached ({type(exc).__name__}).") from None
    if response.status_code == 429 or response.status_code >= 500:
        raise Failed(f"{field}: answered HTTP {response.status_code}.")
    if response.status_code >= 400:
        raise Refused(f"{field}: answered HTTP {response.status_code}.")
    return response


def send_webhook(config: dict, secrets: dict, payload: dict) -> None:
    body = json.dumps(payload, sort_keys=True, separators=(",", ":")).encode()
    timestamp = str(int(time.time()))
    _post(config["url"], body, field="config.url", headers={
        TIMESTAMP_HEADER: timestamp, SIGNATURE_HEADER: signature(secrets["secret"], timestamp, body)})


def send_slack(config: dict, secrets: dict, payload: dict, *, direct_to: str = "") -> None:
    """To the channel's recipients; and through the Web API, with `directNotifications` on, to the subscriber too
    (`direct_to`: their e-mail, found in the workspace by users.lookupByEmail). An incoming webhook posts to its
    one channel only."""
    text = text_of(payload)
    if secrets.get("webhookUrl"):
        _post(secrets["webhookUrl"], json.dumps({"text": text}).encode(), field="config.webhookUrl", headers={})
        return
    auth = {"Authorization": f"Bearer {secrets['apiToken']}"}
    for recipient in config.get("recipients") or []:
        _slack_post(auth, recipient, text, recipient)
    if direct_to and config.get("directNotifications") is not False:
        _slack_direct(auth, direct_to, text)


def _slack_api(method: str) -> str:
    return settings.NOTIFICATIONS_SLACK_API_URL.rstrip("/") + "/" + method


def _slack_post(auth: dict, channel: str, text: str, named: str) -> None:
    response = _post(_slack_api("chat.postMessage"), json.dumps({"channel": channel, "text": text}).encode(),
                     field="NOTIFICATIONS_SLACK_API_URL", headers=auth)
    answer = _json(response)
    if not answer.get("ok"):
        error = str(answer.get("error") or "unknown")[:64]
        raise (Failed if error in ("ratelimited", "service_unavailable", "fatal_error") else Refused)(
            f"Slack refused the message to {named}: {error}.")


def _slack_direct(auth: dict, email: str, text: str) -> None:
    """A direct message to the workspace member with this e-mail. The channel's messages are sent by then, so a
    direct message that fails is logged and never fails the delivery (retrying it would post them twice); a
    subscriber who is not in the workspace gets none."""
    try:
        found = _json(_post(_slack_api("users.lookupByEmail"), json.dumps({"email": email}).encode(),
                            field="NOTIFICATIONS_SLACK_API_URL", headers=auth))
        user = (found.get("user") or {}).get("id") if found.get("ok") else None
        if not user:
            log.info("no Slack direct message: the subscriber is not found in the workspace (%s)",
                     str(found.get("error") or "no user")[:64])
            return
        _slack_post(auth, str(user), text, "the subscriber")
    except (Failed, Refused) as exc:
        log.warning("no Slack direct message: %s", exc)


def slack_app_create(access_token: str, manifest: dict) -> str:
    """Slack's apps.manifest.create with a configuration access token: the new app's settings URL."""
    url = settings.NOTIFICATIONS_SLACK_API_URL.rstrip("/") + "/apps.manifest.create"
    response = _post(url, json.dumps({"manifest": manifest}).encode(), field="NOTIFICATIONS_SLACK_API_URL",
                     headers={"Authorization": f"Bearer {access_token}"})
    answer = _json(response)
    if not answer.get("ok") or not answer.get("app_id"):
        raise Refused(f"Slack did not create the app: {str(answer.get('error') or 'unknown')[:64]}.")
    return f"https://api.slack.com/apps/{answer['app_id']}"


def _json(response: requests.Response) -> dict:
    try:
        answer = response.json()
    except ValueError:
        return {}
    return answer if isinstance(answer, dict) else {}


class _PeerCheckedBackend(EmailBackend):
    """Django's SMTP backend on `outbound.SMTP` (STARTTLS or plain; the channels have no implicit TLS)."""

    @property
    def connection_class(self):
        return SMTP


def smtp_connection(config: dict, secrets: dict):
    host, port = config["smtpHost"], config.get("smtpPort") or 587
    try:
        smtp_host_check("config.smtpHost", host, port)
    except OutboundRefused as exc:
        raise Refused(f"{exc.field}: {exc.reason}") from None
    login = config.get("authType") not in ("auth_none", "")
    return _PeerCheckedBackend(host=host, port=port, username=config.get("username", "") if login else "",
                               password=secrets.get("password", "") if login else "",
                               use_tls=bool(config.get("smtpTlsEnabled")),
                               timeout=settings.NOTIFICATIONS_TIMEOUT_SECONDS, fail_silently=False)


def send_email(config: dict, secrets: dict, payload: dict, *, to: list[str]) -> None:
    if not to:
        raise Refused("No recipient: the channel names none and the subscriber has no e-mail address.")
    subject = render_subject(config.get("subject") or DEFAULT_SUBJECT, category=payload["category"],
                             reason=payload["type"], name=(payload.get("workload") or {}).get("name", ""))
    message = EmailMessage(subject=subject, body=text_of(payload),
                           from_email=formataddr((config.get("fromDisplayName") or "", config["from"])), to=to,
                           connection=smtp_connection(config, secrets))
    try:
        message.send()
    except AddressRefused as exc:
        raise Refused(f"config.smtpHost: {exc}") from None
    except smtplib.SMTPAuthenticationError:
        raise Refused("The SMTP server refused the channel's username and password.") from None
    except (smtplib.SMTPException, OSError) as exc:
        raise Failed(f"The SMTP server could not take the message ({type(exc).__name__}).") from None


def smtp_reachable(config: dict, secrets: dict) -> bool:
    """Whether the SMTP server answers and takes the channel's login (validate-notification-channel)."""
    try:
        connection = smtp_connection(config, secrets)
        connection.open()
        connection.close()
    except (Refused, AddressRefused, smtplib.SMTPException, OSError):
        return False
    return True
