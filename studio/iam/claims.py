"""What an identity provider's claims say of a user, read through Run:ai's mappers (pure functions).

Run:ai's `Mappers` name the claim that holds each of: `email`, `groups`, `uid`, `gid`, `supplementaryGroups`. A
name may be a dotted path into nested claims (`metadata.uid`, as Run:ai's OpenShift example has it). Claims that
are absent or of another shape are read as absent: a provider that sends no uid leaves the user without one.
"""

from dataclasses import dataclass

DEFAULT_MAPPERS = {"email": "email", "groups": "groups", "uid": "uid", "gid": "gid",
                   "supplementaryGroups": "supplementaryGroups"}
MAPPER_NAMES = tuple(DEFAULT_MAPPERS)
USERNAME_MAX = 150


class ClaimProblem(ValueError):
    """The provider's claims do not let this user in (the message says why, for the login page)."""


@dataclass(frozen=True)
class Identity:
    subject: str
    username: str
    email: str
    first_name: str
    last_name: str
    groups: tuple[str, ...]
    uid: int | None
    gid: int | None
    supplementary_groups: tuple[int, ...]


def mappers_with_defaults(mappers: dict | None) -> dict:
    return {**DEFAULT_MAPPERS, **{k: v for k, v in (mappers or {}).items() if k in DEFAULT_MAPPERS and v}}


def claim(claims: dict, path: str):
    """The value at `path` (a claim name, or a dotted path into nested claims); None where there is none. A
    claim whose own name has dots (`https://example.com/groups`) is found first as it is."""
    if not path:
        return None
    if path in claims:
        return claims[path]
    value = claims
    for part in path.split("."):
        if not isinstance(value, dict) or part not in value:
            return None
        value = value[part]
    return value


def _strings(value) -> tuple[str, ...]:
    if isinstance(value, str):
        value = value.replace(",", " ").split()
    if not isinstance(value, (list, tuple)):
        return ()
    return tuple(dict.fromkeys(str(v).strip() for v in value if isinstance(v, (str, int)) and str(v).strip()))


def _id(value) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value if 0 <= value < 2**31 else None
    if isinstance(value, str) and value.strip().isdigit():
        return _id(int(value.strip()))
    if isinstance(value, list) and len(value) == 1:  # SAML-style attributes arrive as one-item lists
        return _id(value[0])
    return None


def _ids(value) -> tuple[int, ...]:
    parts = value.replace(",", " ").split() if isinstance(value, str) else value
    if not isinstance(parts, (list, tuple)):
        return ()
    ids = (_id(p) for p in parts)
    return tuple(dict.fromkeys(i for i in ids if i is not None))


def mandatory_claim_problem(claims: dict, mandatory: dict | None) -> str:
    """Run:ai's `mandatoryClaim`: the claim must hold one of the values (or a list holding one)."""
    if not mandatory:
        return ""
    value = claim(claims, mandatory.get("claim", ""))
    held = set(_strings(value)) if isinstance(value, (list, tuple, str)) else {str(value)} if value is not None else set()
    if held & set(mandatory.get("values") or []):
        return ""
    return f"Your account at the identity provider lacks what this installation asks for (claim {mandatory.get('claim')!r})."


def identity_from_claims(claims: dict, mappers: dict | None = None) -> Identity:
    """The user the claims describe. Raises ClaimProblem when they name no one (no subject, no name)."""
    mapped = mappers_with_defaults(mappers)
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject:
        raise ClaimProblem("The identity provider sent no subject (sub) for this account.")
    email = claim(claims, mapped["email"])
    email = email.strip() if isinstance(email, str) else ""
    preferred = claims.get("preferred_username")
    username = email or (preferred.strip() if isinstance(preferred, str) else "")
    if not username:
        raise ClaimProblem("The identity provider sent neither an email nor a preferred_username for this account.")
    if len(username) > USERNAME_MAX:
        raise ClaimProblem(f"The account's name is longer than {USERNAME_MAX} characters.")
    given, family = claims.get("given_name"), claims.get("family_name")
    if not isinstance(given, str) and isinstance(claims.get("name"), str):
        given, _, family = claims["name"].partition(" ")
    return Identity(
        subject=subject, username=username, email=email,
        first_name=(given if isinstance(given, str) else "")[:150],
        last_name=(family if isinstance(family, str) else "")[:150],
        groups=tuple(g[:150] for g in _strings(claim(claims, mapped["groups"]))),
        uid=_id(claim(claims, mapped["uid"])), gid=_id(claim(claims, mapped["gid"])),
        supplementary_groups=_ids(claim(claims, mapped["supplementaryGroups"])),
    )
