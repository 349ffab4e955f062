"""Claims to a user, through Run:ai's mappers (studio/iam/claims.py): table tests of the pure functions."""

import pytest

from studio.iam.claims import ClaimProblem, identity_from_claims, mandatory_claim_problem

BASE = {"sub": "u-1", "email": "ada@example.com"}


@pytest.mark.parametrize(("claims", "mappers", "expected"), [
    ({"groups": ["team-a", "team-b", "team-a"]}, {}, {"groups": ("team-a", "team-b")}),
    ({"groups": "team-a, team-b"}, {}, {"groups": ("team-a", "team-b")}),
    ({"roles": ["x"]}, {"groups": "roles"}, {"groups": ("x",)}),
    ({"groups": {"not": "a list"}}, {}, {"groups": ()}),
    ({"uid": 1001, "gid": "2001", "supplementaryGroups": "3001,3002"}, {},
     {"uid": 1001, "gid": 2001, "supplementary_groups": (3001, 3002)}),
    ({"UID": ["1001"], "GID": [2001]}, {"uid": "UID", "gid": "GID"}, {"uid": 1001, "gid": 2001}),
    ({"metadata": {"uid": 42, "gid": 43}}, {"uid": "metadata.uid", "gid": "metadata.gid"}, {"uid": 42, "gid": 43}),
    ({"uid": -1, "gid": True, "supplementaryGroups": [1, "x", 2**40]}, {},
     {"uid": None, "gid": None, "supplementary_groups": (1,)}),
    ({"mail": "other@example.com"}, {"email": "mail"}, {"username": "other@example.com", "email": "other@example.com"}),
    ({"name": "Ada Lovelace"}, {}, {"first_name": "Ada", "last_name": "Lovelace"}),
])
def test_claims_read_through_the_mappers(claims, mappers, expected):
    identity = identity_from_claims({**BASE, **claims}, mappers)
    assert {name: getattr(identity, name) for name in expected} == expected


def test_a_user_is_named_by_email_else_preferred_username_else_refused():
    assert identity_from_claims({"sub": "s", "preferred_username": "ada"}).username == "ada"
    with pytest.raises(ClaimProblem, match="neither an email nor a preferred_username"):
        identity_from_claims({"sub": "s"})
    with pytest.raises(ClaimProblem, match="no subject"):
        identity_from_claims({"email": "a@example.com"})


@pytest.mark.parametrize(("claims", "refused"), [
    ({"tier": "gold"}, False), ({"tier": ["silver", "gold"]}, False), ({"tier": "silver"}, True), ({}, True),
])
def test_the_mandatory_claim_lets_in_only_its_values(claims, refused):
    problem = mandatory_claim_problem(claims, {"claim": "tier", "values": ["gold", "platinum"]})
    assert bool(problem) is refused
    assert mandatory_claim_problem(claims, None) == ""
