"""The lowest app: organisation (org/), identity (iam/), clusters (clusters/), the audit trail, listing conventions,
the table component, errors and ids. The Django project package (settings, URLs, WSGI, Celery) is config/."""
