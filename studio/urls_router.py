from rest_framework.routers import SimpleRouter


class Router(SimpleRouter):
    """Routes without trailing slashes, as the Run:ai API spells them."""

    def __init__(self):
        super().__init__(trailing_slash="")
