"""The two keys a deployment must bring: SECRET_KEY (sessions, CSRF, and bearer tokens unless
TOKEN_SIGNING_KEY is set) and FIELD_ENCRYPTION_KEY (cluster credentials at rest). With DEBUG off there is no
default for either: a key known to anyone who has read this code would let them forge an admin's token or
decrypt a stored cluster token. `manage.py check --deploy` names each missing key; the WSGI application
(gunicorn, runserver), the Celery worker and beat, and the cluster watcher call `require_keys()` and refuse to
start. Other management commands (migrate, makemigrations) need neither key and still run."""

from cryptography.fernet import Fernet
from django.conf import settings
from django.core import checks
from django.core.exceptions import ImproperlyConfigured

HOW = "Set it in the environment (`make run` makes and keeps its own under var/secrets.env)."


def key_problems() -> list[checks.CheckMessage]:
    if settings.DEBUG:
        return []  # development: settings fall back to a development key, and crypto derives one from it
    problems = []
    if settings.SECRET_KEY_MISSING:
        problems.append(checks.Error(
            "SECRET_KEY is not set, and DEBUG is off.", hint="A long random value, e.g. "
            "`python -c 'import secrets; print(secrets.token_urlsafe(50))'`. " + HOW, id="studio.E001"))
    if not settings.FIELD_ENCRYPTION_KEY:
        problems.append(checks.Error(
            "FIELD_ENCRYPTION_KEY is not set, and DEBUG is off.", hint="A Fernet key, e.g. `python -c 'from "
            "cryptography.fernet import Fernet; print(Fernet.generate_key().decode())'`. " + HOW, id="studio.E002"))
    else:
        try:
            Fernet(settings.FIELD_ENCRYPTION_KEY)
        except (ValueError, TypeError):
            problems.append(checks.Error(
                "FIELD_ENCRYPTION_KEY is not a Fernet key (url-safe base64 of 32 bytes).", id="studio.E003"))
    return problems


@checks.register(checks.Tags.security, deploy=True)
def check_keys(app_configs=None, **kwargs) -> list[checks.CheckMessage]:
    return key_problems()


def require_keys() -> None:
    """Raise ImproperlyConfigured naming every missing or unusable key; called as a server process starts."""
    problems = key_problems()
    if problems:
        raise ImproperlyConfigured("Refusing to start: " + " ".join(
            f"{p.msg} {p.hint or ''}".strip() for p in problems))
