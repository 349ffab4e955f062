"""The Django project package: settings, URLs, WSGI, Celery and its filesystem broker. Nothing of the apps imports
it; they read settings through django.conf and reach Celery through celery.current_app.

The Celery app is created here, as the settings load, so that it is the current app of every process that
loads them (cookiecutter-django's layout)."""

from .celery import app as celery_app

__all__ = ["celery_app"]
