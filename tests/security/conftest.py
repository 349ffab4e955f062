from tests.api.conftest import world  # noqa: F401  (one object of every kind in project alpha)
