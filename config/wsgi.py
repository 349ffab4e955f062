import os

from django.core.wsgi import get_wsgi_application

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
application = get_wsgi_application()

from config.web_tier import SlowClientGuard  # noqa: E402
from studio.keys import require_keys  # noqa: E402  (needs the settings loaded above)

require_keys()  # gunicorn's workers fail to boot, with the reason, rather than serve with a missing key
application = SlowClientGuard(application)  # a slow body never reaches Django (config/web_tier.py)
