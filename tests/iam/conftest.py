"""The users of the single sign-on tests' Dex (the fixture `start_dex` is tests/conftest.py's)."""

from tests.iam.dex_support import DexUser

ADA = DexUser(email="ada@example.com", password="ada-password-1", username="ada", user_id="u-ada",
              groups=["team-a", "readers"])
BEN = DexUser(email="ben@example.com", password="ben-password-1", username="ben", user_id="u-ben", groups=["team-b"])
