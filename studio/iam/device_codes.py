"""Single sign-on for the command line: OAuth's device authorization grant (RFC 8628).

`studio login --sso` asks for a pair of codes (`cli_device_start`): a device code the CLI keeps and polls with, and
a short user code the user types (or follows, in the link that carries it) on the portal's page, where she is
signed in with her password or the organisation's identity provider and approves or denies (`cli_device_decide`,
recorded in the audit trail). The CLI's poll (`cli_device_token`) answers RFC 8628's errors until then, and once
approved a bearer token of that user, exactly once.

Neither code is stored: only keyed digests (HMAC-SHA256 with the server's secret key), so the table gives nothing
to a reader of the database. A pair lives CLI_DEVICE_CODE_SECONDS (10 minutes); polling faster than the interval
answers `slow_down` and lengthens the interval by 5 seconds, as the RFC says. User codes are 8 letters of an
alphabet without vowels or look-alikes (RFC 8628 §6.1), shown as XXXX-XXXX; the page throttles how many a user may
try (studio/cli_device.py)."""

from __future__ import annotations

import ipaddress
import secrets
from dataclasses import dataclass
from datetime import timedelta

from django.conf import settings
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.crypto import salted_hmac

from studio.audit import AuditEvent, audit_record, snapshot
from studio.iam.auth import issue_token
from studio.iam.models import CliDeviceAuthorization

USER_CODE_ALPHABET = "BCDFGHJKLMNPQRSTVWXZ"
USER_CODE_LENGTH = 8
SLOW_DOWN_STEP = 5  # seconds added to the interval at each slow_down (RFC 8628 §3.5)
POLL_LEEWAY = timedelta(milliseconds=200)  # a poll this much early is still on time (clocks, the network)
KEEP_FINISHED = timedelta(days=1)  # expired pairs are deleted this long after they expire

Status = CliDeviceAuthorization.Status


@dataclass(frozen=True)
class DeviceCodes:
    authorization: CliDeviceAuthorization
    device_code: str
    user_code: str  # as shown: XXXX-XXXX
    expires_in: int  # seconds


class DeviceGrantError(Exception):
    """A poll that gives no token: `error` is RFC 8628's (or OAuth's) code, the message says why."""

    def __init__(self, error: str, message: str):
        super().__init__(message)
        self.error = error


def _digest(kind: str, value: str) -> str:
    return salted_hmac(f"studio.cli-device.{kind}", value, algorithm="sha256").hexdigest()


def normalised_user_code(text: str) -> str:
    """The user code as typed, in capitals, without the dash or spaces: "bcdf-ghjk" and "BCDF GHJK" are one."""
    return "".join(c for c in str(text).upper() if c.isalnum())


def shown_user_code(code: str) -> str:
    half = USER_CODE_LENGTH // 2
    return f"{code[:half]}-{code[half:]}"


def _address(address: str | None) -> str | None:
    try:
        return str(ipaddress.ip_address((address or "").strip()))
    except ValueError:
        return None


def cli_device_start(*, client_name: str = "", client_address: str | None = None,
                     client_agent: str = "") -> DeviceCodes:
    """A new pair of codes (pairs expired more than a day ago are deleted on the way)."""
    now = timezone.now()
    CliDeviceAuthorization.objects.filter(expires_at__lt=now - KEEP_FINISHED).delete()
    device_code = secrets.token_urlsafe(32)
    for _ in range(5):  # a user code already given (one in 25 billion) is drawn again
        user_code = "".join(secrets.choice(USER_CODE_ALPHABET) for _ in range(USER_CODE_LENGTH))
        try:
            with transaction.atomic():
                authorization = CliDeviceAuthorization.objects.create(
                    device_code_digest=_digest("device", device_code), user_code_digest=_digest("user", user_code),
                    client_name=client_name[:100], client_address=_address(client_address),
                    client_agent=client_agent[:200], interval=settings.CLI_DEVICE_POLL_SECONDS,
                    expires_at=now + timedelta(seconds=settings.CLI_DEVICE_CODE_SECONDS))
        except IntegrityError:
            continue
        return DeviceCodes(authorization, device_code, shown_user_code(user_code), settings.CLI_DEVICE_CODE_SECONDS)
    raise RuntimeError("could not draw an unused user code")


def cli_device_pending(*, user_code: str) -> CliDeviceAuthorization | None:
    """The sign-in waiting for a decision under this user code; None for a code unknown, decided or expired."""
    code = normalised_user_code(user_code)
    if len(code) != USER_CODE_LENGTH:
        return None
    return CliDeviceAuthorization.objects.filter(user_code_digest=_digest("user", code), status=Status.PENDING,
                                                 expires_at__gt=timezone.now()).first()


def cli_device_decide(*, user_code: str, user, approve: bool) -> CliDeviceAuthorization | None:
    """Approve (the CLI's next poll gets a token of `user`) or deny the pending sign-in of this user code, in the
    audit trail; None when there is none (unknown, expired, or decided already)."""
    with transaction.atomic():
        found = cli_device_pending(user_code=user_code)
        if found is None:
            return None
        authorization = CliDeviceAuthorization.objects.select_for_update().get(pk=found.pk)
        if authorization.status != Status.PENDING or authorization.expires_at <= timezone.now():
            return None  # decided in another tab meanwhile
        before = snapshot(authorization)
        authorization.status = Status.APPROVED if approve else Status.DENIED
        authorization.user, authorization.decided_at = user, timezone.now()
        authorization.save(update_fields=["status", "user", "decided_at"])
        audit_record(actor=user, action=AuditEvent.Action.UPDATE, instance=authorization, before=before)
    return authorization


def cli_device_token(*, device_code: str) -> dict:
    """The poll: a token (`issue_token`'s answer) once approved, and never again for this device code; otherwise a
    DeviceGrantError with RFC 8628's error (authorization_pending, slow_down, access_denied, expired_token) or
    invalid_grant for a code that is not ours or was used already."""
    with transaction.atomic():  # what the poll changes (its time, the interval, used) is kept, refused or not
        outcome = _poll(str(device_code), timezone.now())
    if isinstance(outcome, DeviceGrantError):
        raise outcome
    return outcome


def _poll(device_code: str, now) -> dict | DeviceGrantError:
    authorization = (CliDeviceAuthorization.objects.select_for_update()
                     .filter(device_code_digest=_digest("device", device_code)).first())
    if authorization is None or authorization.status == Status.USED:
        return DeviceGrantError("invalid_grant", "This device code is not valid: unknown, or used already.")
    if authorization.expires_at <= now:
        return DeviceGrantError("expired_token", "The code expired before it was approved: start again "
                                                 "(studio login --sso).")
    if authorization.status == Status.DENIED:
        return DeviceGrantError("access_denied", "The sign-in was denied in the browser.")
    too_soon = authorization.last_polled_at is not None and (
        now - authorization.last_polled_at + POLL_LEEWAY < timedelta(seconds=authorization.interval))
    authorization.last_polled_at = now
    if too_soon:
        authorization.interval += SLOW_DOWN_STEP
        authorization.save(update_fields=["last_polled_at", "interval"])
        return DeviceGrantError("slow_down", f"Polling too fast: wait {authorization.interval} seconds between "
                                             "requests.")
    if authorization.status == Status.PENDING:
        authorization.save(update_fields=["last_polled_at"])
        return DeviceGrantError("authorization_pending", "Waiting for the user to approve the sign-in.")
    user = authorization.user
    if user is None or not user.is_active:
        return DeviceGrantError("access_denied", "The user who approved the sign-in is no longer active.")
    authorization.status = Status.USED
    authorization.save(update_fields=["last_polled_at", "status"])
    return issue_token(user=user)
