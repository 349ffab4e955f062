import os
from pathlib import Path

from django.apps import AppConfig
from django.contrib.auth.signals import user_logged_in
from django.db.backends.signals import connection_created
from django.db.models.signals import post_migrate


class StudioConfig(AppConfig):
    name = "studio"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self):
        from studio import keys, schema  # noqa: F401  (register the key checks and the OpenAPI auth extension)
        from studio.iam import passwords
        from studio.iam.roles import roles_ensure

        post_migrate.connect(roles_ensure, sender=self, dispatch_uid="studio-roles-ensure")
        user_logged_in.connect(passwords.remember_at_login, dispatch_uid="studio-temporary-password")
        connection_created.connect(_owner_only_sqlite, dispatch_uid="studio-owner-only-sqlite")
        from perf import timestamps

        timestamps.connect()  # PostgreSQL's timestamps read by psycopg's C loader, not Django's Python one
        from django.conf import settings

        database = settings.DATABASES["default"]
        if database["ENGINE"].endswith("sqlite3"):
            owner_only_file(database["NAME"], create=True)


def owner_only_file(name, *, create: bool = False) -> None:
    """The SQLite database (and its journal) owner-only, as the keys beside it under var/ are: SQLite creates the
    file with the umask's 0644 and its journals with the file's mode, so it is made 0600 before SQLite opens it,
    and a file made before this rule is tightened."""
    if not name or str(name).startswith(":memory:") or str(name).startswith("file:"):
        return
    path = Path(name)
    if create and not path.exists() and path.parent.is_dir():
        os.close(os.open(path, os.O_WRONLY | os.O_CREAT, 0o600))  # an empty file is a new SQLite database
    for file in (path, *(path.with_name(path.name + suffix) for suffix in ("-journal", "-wal", "-shm"))):
        try:
            if file.stat().st_mode & 0o077:
                file.chmod(0o600)
        except FileNotFoundError:
            pass


def _owner_only_sqlite(sender, connection, **kwargs):
    if connection.vendor == "sqlite":  # the test database, or one a setting names after start-up
        owner_only_file(connection.settings_dict["NAME"])
