"""Writes of single sign-on and service accounts: one function per change, validated, audited and atomic."""

import secrets

from django.contrib.auth import get_user_model
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import Group
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone

from studio.addresses import AccessRefused, check_url
from studio.audit import AuditEvent, audit_record, snapshot
from studio.errors import Conflict
from studio.iam.claims import ClaimProblem, identity_from_claims, mandatory_claim_problem
from studio.iam.models import SERVICE_ACCOUNT_USERNAME, ExternalIdentity, IdentityProvider, ServiceAccount
from studio.iam.providers import Provider, ProviderError, discovery

# --- users of the identity provider ------------------------------------------------------------------------------


def external_login(*, provider: Provider, issuer: str, claims: dict, refresh_token: str = ""):
    """The user the provider's verified claims name, created at the first login (no usable password: the
    provider is how they log in), their groups set to the provider's: a group the provider no longer sends is
    taken away, and with it the roles of the access rules whose subject is that group. Raises ClaimProblem
    when the claims let no one in."""
    problem = mandatory_claim_problem(claims, provider.mandatory_claim)
    if problem:
        raise ClaimProblem(problem)
    identity = identity_from_claims(claims, provider.mappers)
    for attempt in range(2):  # two first logins of one account at once: the second finds the first's user
        try:
            with transaction.atomic():
                return _login(provider=provider, issuer=issuer, identity=identity, refresh_token=refresh_token)
        except IntegrityError:
            if attempt:
                raise
    raise AssertionError("unreachable")


def _login(*, provider, issuer, identity, refresh_token):
    users = get_user_model()
    link = (ExternalIdentity.objects.select_for_update().select_related("user")
            .filter(issuer=issuer, subject=identity.subject).first())
    now = timezone.now()
    if link is None:
        if users.objects.filter(username=identity.username).exists():
            raise ClaimProblem(f"The name {identity.username} is a local user's here: an administrator must remove "
                               "that user before its owner logs in through the identity provider.")
        user = users(username=identity.username, email=identity.email, first_name=identity.first_name,
                     last_name=identity.last_name)
        user.set_unusable_password()
        user.save()
        audit_record(actor=user, action=AuditEvent.Action.CREATE, instance=user,
                     extra={"identityProvider": provider.alias, "groups": list(identity.groups)})
        link = ExternalIdentity(user=user, issuer=issuer, subject=identity.subject)
    else:
        user = link.user
        if not user.is_active:
            raise ClaimProblem("This account is deactivated here: ask an administrator.")
        changed = {k: v for k, v in (("email", identity.email), ("first_name", identity.first_name),
                                     ("last_name", identity.last_name)) if v and getattr(user, k) != v}
        if identity.username != user.username and not users.objects.filter(username=identity.username).exists():
            changed["username"] = identity.username
        if changed:
            before = snapshot(user)
            for name, value in changed.items():
                setattr(user, name, value)
            user.save(update_fields=list(changed))
            audit_record(actor=user, action=AuditEvent.Action.UPDATE, instance=user, before=before)
    _groups_set(user, previous=link.groups, now=identity.groups)
    link.provider_alias = provider.alias
    link.groups = list(identity.groups)
    link.uid, link.gid = identity.uid, identity.gid
    link.supplementary_groups = list(identity.supplementary_groups)
    if refresh_token:
        link.refresh_token = refresh_token
    link.last_login_at = now
    link.save()
    users.objects.filter(pk=user.pk).update(last_login=now)
    return user


def _groups_set(user, *, previous, now) -> None:
    """The user's groups among the provider's follow the provider; groups given here by other means stay."""
    current = set(user.groups.values_list("name", flat=True))
    gone = (set(previous) - set(now)) & current
    if gone:
        user.groups.remove(*Group.objects.filter(name__in=gone))
    new = [name for name in now if name not in current]
    if new:
        existing = {g.name: g for g in Group.objects.filter(name__in=new)}
        for name in new:
            if name not in existing:
                existing[name], _ = Group.objects.get_or_create(name=name)
        user.groups.add(*existing.values())
    if gone or new:
        audit_record(actor=user, action=AuditEvent.Action.UPDATE, instance=user,
                     extra={"groupsAdded": sorted(new), "groupsRemoved": sorted(gone)})


def identity_forget_session(user) -> None:
    """The provider refused the user's refresh token: keep none."""
    ExternalIdentity.objects.filter(user=user).update(refresh_token="")


# --- the identity provider (Run:ai's Idps) -----------------------------------------------------------------------

def _check_reachable(*, discovery_url: str, client_id: str, client_secret: str) -> None:
    """The discovery URL may not point at link-local or metadata addresses, nor at loopback or private ones
    unless CLUSTER_ALLOWED_NETWORKS lists them (the rules of cluster URLs); then its document must be read."""
    try:
        check_url("oidcData.discoverDocumentUrl", discovery_url)
    except AccessRefused as exc:
        raise ValidationError({exc.field: exc.message}) from None
    try:
        discovery(Provider(alias="check", discovery_url=discovery_url, client_id=client_id,
                           client_secret=client_secret), fresh=True)
    except ProviderError as exc:
        raise ValidationError({"oidcData.discoverDocumentUrl": str(exc)}) from None


def idp_create(*, actor, alias: str, discovery_url: str, client_id: str, client_secret: str, scopes: list,
               mandatory_claim: dict | None, mappers: dict, name: str = "") -> IdentityProvider:
    """The installation's provider (one at a time, as Run:ai has). Its discovery document is read first: a
    provider that cannot be reached is a 400 naming the URL, not a login page that fails later."""
    if IdentityProvider.objects.exists():
        raise Conflict("An identity provider is already configured: update or delete it first.")
    _check_reachable(discovery_url=discovery_url, client_id=client_id, client_secret=client_secret)
    row = IdentityProvider(alias=alias, name=name, discovery_url=discovery_url, client_id=client_id,
                           client_secret=client_secret, scopes=scopes, mandatory_claim=mandatory_claim,
                           mappers=mappers, created_by=actor.get_username())
    try:
        with transaction.atomic():
            row.save()
            audit_record(actor=actor, action=AuditEvent.Action.CREATE, instance=row)
    except IntegrityError as exc:
        raise Conflict(f"An identity provider {alias!r} already exists.") from exc
    return row


def idp_update(row: IdentityProvider, *, actor, **fields) -> IdentityProvider:
    """Replace the provider's settings; a client secret left out keeps the stored one."""
    if not fields.get("client_secret"):
        fields.pop("client_secret", None)
    _check_reachable(discovery_url=fields.get("discovery_url", row.discovery_url),
                     client_id=fields.get("client_id", row.client_id), client_secret="")
    with transaction.atomic():
        row = IdentityProvider.objects.select_for_update().get(pk=row.pk)
        before = snapshot(row)
        for name, value in fields.items():
            setattr(row, name, value)
        row.save()
        audit_record(actor=actor, action=AuditEvent.Action.UPDATE, instance=row, before=before)
    return row


def idp_mappers_update(row: IdentityProvider, *, actor, mappers: dict) -> IdentityProvider:
    with transaction.atomic():
        row = IdentityProvider.objects.select_for_update().get(pk=row.pk)
        before = snapshot(row)
        row.mappers = mappers
        row.save(update_fields=["mappers", "updated_at"])
        audit_record(actor=actor, action=AuditEvent.Action.UPDATE, instance=row, before=before)
    return row


def idp_delete(row: IdentityProvider, *, actor) -> None:
    """Users of the provider keep their rows (and workloads), and can log in again once a provider is back."""
    before = snapshot(row)
    with transaction.atomic():
        row.delete()
        audit_record(actor=actor, action=AuditEvent.Action.DELETE, instance=row, before=before)


# --- service accounts (Run:ai's Service Accounts) -----------------------------------------------------------------

def _secret() -> tuple[str, str]:
    secret = secrets.token_urlsafe(32)
    return secret, make_password(secret)


def service_account_create(*, actor, name: str) -> tuple[ServiceAccount, str]:
    """A service account and its secret (answered once, stored hashed); its client id is its name."""
    users = get_user_model()
    username = SERVICE_ACCOUNT_USERNAME.format(name)
    if ServiceAccount.objects.filter(name=name).exists() or users.objects.filter(username=username).exists():
        raise Conflict(f"A service account named {name!r} already exists.")
    secret, digest = _secret()
    try:
        with transaction.atomic():
            user = users(username=username)
            user.set_unusable_password()
            user.save()
            account = ServiceAccount.objects.create(name=name, client_id=name, user=user, secret_hash=digest,
                                                    created_by=actor.email or actor.get_username())
            audit_record(actor=actor, action=AuditEvent.Action.CREATE, instance=account)
    except IntegrityError as exc:
        raise Conflict(f"A service account named {name!r} already exists.") from exc
    return account, secret


def service_account_set_enabled(account: ServiceAccount, *, actor, enabled: bool) -> ServiceAccount:
    """Disabled, its secret gets no token and the tokens it holds are refused; its access rules stay."""
    with transaction.atomic():
        before = snapshot(account)
        account.enabled = enabled
        account.save(update_fields=["enabled", "updated_at"])
        get_user_model().objects.filter(pk=account.user_id).update(is_active=enabled)
        audit_record(actor=actor, action=AuditEvent.Action.UPDATE, instance=account, before=before)
    return account


def service_account_secret_regenerate(account: ServiceAccount, *, actor) -> str:
    """A new secret; the old one gets no more tokens, and the tokens issued with it are revoked (a token
    carries a digest of its user's password hash, which changes here)."""
    secret, digest = _secret()
    with transaction.atomic():
        before = snapshot(account)
        account.secret_hash = digest
        account.save(update_fields=["secret_hash", "updated_at"])
        user = account.user
        user.set_unusable_password()
        user.save(update_fields=["password"])
        audit_record(actor=actor, action=AuditEvent.Action.UPDATE, instance=account, before=before)
    return secret


def service_account_delete(account: ServiceAccount, *, actor) -> None:
    """The account, its user row and its access rules; the workloads it submitted stay (without a creator)."""
    before = snapshot(account)
    with transaction.atomic():
        user = account.user
        audit_record(actor=actor, action=AuditEvent.Action.DELETE, instance=account, before=before)
        user.delete()
