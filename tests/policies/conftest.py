"""The Kit catalogue and the service profile of the kit and profiles tests, to launch through them."""

from tests.kit.conftest import kit  # noqa: F401
from tests.profiles.conftest import make_profile, profile, template, version  # noqa: F401
