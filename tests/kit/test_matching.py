"""kit.matching: which profiles serve which app versions (wildcards in profiles and in paths), newest version."""

import pytest
import semver
from hypothesis import given
from hypothesis import strategies as st

from kit.matching import is_version, matches, matching, newest, newest_first

VIEWER_1 = [{"name": "usd-viewer", "versions": ["1.0.0"]}]
ANY_APP_V1 = [{"name": "*", "versions": ["1.0.0"]}]
VIEWER_ANY = [{"name": "usd-viewer", "versions": ["*"]}]
ANYTHING = [{"name": "*", "versions": ["*"]}]
TWO_ENTRIES = [{"name": "usd-viewer", "versions": ["2.0.0"]}, {"name": "composer", "versions": ["1.0.0", "1.1.0"]}]


@pytest.mark.parametrize("supported,app,version,expected", [
    # exact
    (VIEWER_1, "usd-viewer", "1.0.0", True),
    (VIEWER_1, "usd-viewer", "1.0.1", False),
    (VIEWER_1, "composer", "1.0.0", False),
    # wildcard application in the profile
    (ANY_APP_V1, "composer", "1.0.0", True),
    (ANY_APP_V1, "composer", "2.0.0", False),
    # wildcard version in the profile
    (VIEWER_ANY, "usd-viewer", "9.9.9-rc.1", True),
    (VIEWER_ANY, "composer", "1.0.0", False),
    # both
    (ANYTHING, "anything", "0.0.1", True),
    # name and versions must hold in the same entry
    (TWO_ENTRIES, "usd-viewer", "1.0.0", False),
    (TWO_ENTRIES, "composer", "1.1.0", True),
    (TWO_ENTRIES, "usd-viewer", "2.0.0", True),
    # wildcards in the path: any application, any version, both
    (VIEWER_1, "*", "1.0.0", True),
    (VIEWER_1, "*", "2.0.0", False),
    (VIEWER_1, "usd-viewer", "*", True),
    (VIEWER_1, "composer", "*", False),
    (VIEWER_1, "*", "*", True),
    (TWO_ENTRIES, "*", "1.1.0", True),
    (ANY_APP_V1, "usd-viewer", "*", True),
    # nothing supported, malformed entries
    ([], "*", "*", False),
    ([{"name": "usd-viewer", "versions": []}], "usd-viewer", "*", False),
    ([{"versions": ["*"]}], "usd-viewer", "1.0.0", False),
    (None, "usd-viewer", "1.0.0", False),
])
def test_matches(supported, app, version, expected):
    assert matches(supported, app, version) is expected


def test_matching_keeps_the_given_order():
    profiles = [("b", ANYTHING), ("a", VIEWER_1), ("c", TWO_ENTRIES)]
    assert matching(profiles, "usd-viewer", "1.0.0", supported=lambda p: p[1]) == [("b", ANYTHING), ("a", VIEWER_1)]
    assert matching(profiles, "*", "1.1.0", supported=lambda p: p[1]) == [("b", ANYTHING), ("c", TWO_ENTRIES)]


@pytest.mark.parametrize("versions,expected", [
    (["1.0.0"], "1.0.0"),
    (["1.2.0", "1.10.0", "1.9.0"], "1.10.0"),  # numeric, not text order
    (["2.0.0-rc.1", "1.9.9"], "2.0.0-rc.1"),
    (["2.0.0", "2.0.0-rc.1"], "2.0.0"),  # a pre-release is below its release
    (["2.0.0-rc.1", "2.0.0-rc.2", "2.0.0-beta"], "2.0.0-rc.2"),
    (["1.0.0+b", "1.0.0+a"], "1.0.0+b"),  # equal precedence: the text decides, whatever the input order
    (["1.0.0+a", "1.0.0+b"], "1.0.0+b"),
])
def test_newest(versions, expected):
    assert newest(versions) == expected


def test_newest_of_nothing_or_of_a_non_version_is_an_error():
    with pytest.raises(ValueError):
        newest([])
    with pytest.raises(ValueError):
        newest(["1.0"])


@pytest.mark.parametrize("text,expected", [
    ("1.0.0", True), ("0.2.0-rc.1+build.5", True), ("1.0", False), ("v1.0.0", False), ("*", False),
    ("latest", False), ("", False), (None, False), (100, False),
])
def test_is_version(text, expected):
    assert is_version(text) is expected


versions = st.builds(
    lambda major, minor, patch, pre: f"{major}.{minor}.{patch}" + (f"-{pre}" if pre else ""),
    st.integers(0, 30), st.integers(0, 30), st.integers(0, 30),
    st.sampled_from(["", "alpha", "alpha.1", "beta", "rc.1", "rc.2", "rc.10"]),
)


@given(st.lists(versions, min_size=1, max_size=12))
def test_newest_is_an_upper_bound_and_first_of_newest_first(items):
    top = newest(items)
    assert top in items
    assert all(semver.Version.parse(v) <= semver.Version.parse(top) for v in items)
    assert newest_first(items)[0] == top
    assert newest(list(reversed(items))) == top


app_ids = st.sampled_from(["usd-viewer", "composer", "explorer"])
entries = st.lists(
    st.fixed_dictionaries({"name": st.one_of(app_ids, st.just("*")),
                           "versions": st.lists(st.one_of(versions, st.just("*")), min_size=1, max_size=3)}),
    max_size=4,
)


@given(entries, app_ids, versions)
def test_a_path_wildcard_widens_never_narrows(supported, app, version):
    if matches(supported, app, version):
        assert matches(supported, "*", version)
        assert matches(supported, app, "*")
        assert matches(supported, "*", "*")
    # `*` in both places matches exactly the profiles that serve something
    assert matches(supported, "*", "*") == bool(supported)
    # adding the catch-all entry makes every concrete pair match
    assert matches([*supported, {"name": "*", "versions": ["*"]}], app, version)
