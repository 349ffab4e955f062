"""Settings, driven by environment variables; with none set, an embedded default that needs no servers
(SQLite and Celery's filesystem broker under var/). Every variable is listed in docs/configuration.md."""

import secrets
from datetime import timedelta
from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(environ.Env().str("STUDIO_VAR_DIR", default=str(BASE_DIR / "var")))
VAR_DIR.mkdir(parents=True, exist_ok=True)

env = environ.Env()
environ.Env.read_env(BASE_DIR / ".env", overwrite=False) if (BASE_DIR / ".env").exists() else None

DEBUG = env.bool("DEBUG", default=False)
# Django's admin site (studio/admin_site.py): a development tool whose writes skip the services and the audit trail.
ADMIN_SITE_ENABLED = env.bool("ADMIN_SITE_ENABLED", default=DEBUG)
# No known key outside DEBUG: studio/keys.py refuses to start servers without SECRET_KEY and
# FIELD_ENCRYPTION_KEY (the latter encrypts cluster credentials at rest; derived from SECRET_KEY only under
# DEBUG). Unset, SECRET_KEY is a random one of this process only, so that `manage.py check --deploy` can load
# and name what is missing.
SECRET_KEY = env.str("SECRET_KEY", default="")
SECRET_KEY_MISSING = not SECRET_KEY
if SECRET_KEY_MISSING:
    SECRET_KEY = "django-insecure-development-only-" + "k" * 40 if DEBUG else secrets.token_urlsafe(50)
FIELD_ENCRYPTION_KEY = env.str("FIELD_ENCRYPTION_KEY", default="")
ALLOWED_HOSTS = env.list("ALLOWED_HOSTS", default=["127.0.0.1", "localhost", "testserver"])
CSRF_TRUSTED_ORIGINS = env.list("CSRF_TRUSTED_ORIGINS", default=[])

# HTTPS=true turns on everything `manage.py check --deploy` asks of a site served over TLS.
HTTPS = env.bool("HTTPS", default=False)
SECURE_SSL_REDIRECT = HTTPS
SESSION_COOKIE_SECURE = HTTPS
CSRF_COOKIE_SECURE = HTTPS
SECURE_HSTS_SECONDS = 31536000 if HTTPS else 0
SECURE_HSTS_INCLUDE_SUBDOMAINS = HTTPS
SECURE_HSTS_PRELOAD = HTTPS
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https") if env.bool("BEHIND_PROXY", default=False) else None
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
X_FRAME_OPTIONS = "DENY"
# Sent on every page (studio/security_headers.py): scripts only from our own static files, no inline script.
CONTENT_SECURITY_POLICY = env.str("CONTENT_SECURITY_POLICY", default=(
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; "
    "font-src 'self'; connect-src 'self'; object-src 'none'; base-uri 'self'; form-action 'self'; "
    "frame-ancestors 'none'"))

# CORS (django-cors-headers), only on the Kit APIs, for browser clients served from other origins (NVIDIA's
# web-viewer-sample): the origins allowed, or every origin. A preflight OPTIONS is answered before authentication;
# no credentials (cookies) cross origins: such clients use a bearer token or a client URL (kit.client_urls).
CORS_ALLOWED_ORIGINS = env.list("CORS_ALLOWED_ORIGINS", default=[])
CORS_ALLOW_ALL_ORIGINS = env.bool("CORS_ALLOW_ALL_ORIGINS", default=False)
CORS_URLS_REGEX = r"^/(?:cfg|streaming)/|^/kit-client/[^/]+/(?:cfg|streaming)/"
CORS_ALLOW_CREDENTIALS = False
CORS_ALLOW_HEADERS = ("accept", "authorization", "content-type", "if-match", "x-request-id")
CORS_EXPOSE_HEADERS = ("location", "etag", "retry-after", "x-request-id")
CORS_PREFLIGHT_MAX_AGE = 600

INSTALLED_APPS = [
    "studio.admin_apps.StudioAdminConfig",  # django.contrib.admin, served only with ADMIN_SITE_ENABLED
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "django_prometheus",
    "rest_framework",
    "rest_framework_simplejwt.token_blacklist",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "django_htmx",
    "corsheaders",
    "studio",
    "sharing",
    "policies",
    "assets",
    "profiles",
    "workloads",
    "kit",
    "usage",
    "notifications",
    "portal",
]

MIDDLEWARE = [
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "studio.logs.RequestIdMiddleware",
    "corsheaders.middleware.CorsMiddleware",  # before anything that answers: it answers preflights itself
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "studio.iam.passwords.TemporaryPasswordMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "studio.security_headers.SecurityHeadersMiddleware",
    "django_htmx.middleware.HtmxMiddleware",
    "studio.errors.DatabaseUnavailableMiddleware",
    "perf.release.ReleaseRenderedResponseMiddleware",  # a rendered response's data is no view's (a GC cycle)
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

ROOT_URLCONF = env.str("ROOT_URLCONF", default="config.urls")  # bench/ adds its bare view
WSGI_APPLICATION = "config.wsgi.application"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "studio.context.navigation",
            ],
        },
    },
]

# Exposed URLs of workloads (their Ingress hosts): each project's are on `<project>.<EXPOSED_URL_DOMAIN>` and names
# under it; unset, an exposed URL is /<project>/<workload>/<port> on any host and takes no url of its own.
EXPOSED_URL_DOMAIN = env.str("EXPOSED_URL_DOMAIN", default="").strip().lower().strip(".")
# The web tier against slow clients (config/web_tier.py, with gunicorn.conf.py's gevent workers).
REQUEST_BODY_TIMEOUT_SECONDS = env.float("REQUEST_BODY_TIMEOUT_SECONDS", default=30)
WEB_MAX_CONCURRENT_REQUESTS = env.int("WEB_MAX_CONCURRENT_REQUESTS", default=8)

DATABASES = {"default": env.db("DATABASE_URL", default=f"sqlite:///{VAR_DIR / 'studio.sqlite3'}")}
DATABASES["default"].setdefault("CONN_MAX_AGE", env.int("DB_CONN_MAX_AGE", default=0))
# A connection kept open is checked before it is used again (after a database restart it is replaced, not failed).
DATABASES["default"].setdefault("CONN_HEALTH_CHECKS", True)
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # A file, not memory, so that Celery worker processes started by tests see the same test database.
    DATABASES["default"]["TEST"] = {"NAME": str(VAR_DIR / "test.sqlite3")}
    DATABASES["default"].setdefault("OPTIONS", {}).update({"timeout": 30, "transaction_mode": "IMMEDIATE"})
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    # Every path that sets a chosen password passes the user (studio.services.me_password_change, Django's
    # changepassword and createsuperuser), so a password like the user's e-mail or name is refused.
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
# Local login (a username and password of this installation): false leaves single sign-on, service accounts
# and access keys (studio/iam/backends.py).
LOCAL_LOGIN_ENABLED = env.bool("LOCAL_LOGIN_ENABLED", default=True)
AUTHENTICATION_BACKENDS = ["studio.iam.backends.LocalPasswordBackend", "studio.iam.oidc.ProviderBackend"]
# Single sign-on (studio/iam/oidc.py, studio/iam/providers.py): an OpenID Connect provider from the environment, or the one set through
# Run:ai's POST /api/v1/idps (the environment's wins). docs/identity.md has examples per provider.
OIDC_DISCOVERY_URL = env.str("OIDC_DISCOVERY_URL", default="")  # the discovery document's URL, or the issuer's
OIDC_CLIENT_ID = env.str("OIDC_CLIENT_ID", default="")
OIDC_CLIENT_SECRET = env.str("OIDC_CLIENT_SECRET", default="")
OIDC_SCOPES = env.list("OIDC_SCOPES", default=["openid", "email", "profile"])
OIDC_PROVIDER_NAME = env.str("OIDC_PROVIDER_NAME", default="")  # the login button: "Log in with <name>"
OIDC_PROVIDER_ALIAS = "oidc"
# Run:ai's mappers: which claim holds groups, uid, gid, supplementaryGroups, email (studio/iam/claims.py).
OIDC_CLAIM_MAPPERS = env.json("OIDC_CLAIM_MAPPERS", default={})
OIDC_MANDATORY_CLAIM = env.json("OIDC_MANDATORY_CLAIM", default={})  # {"claim": "...", "values": ["..."]}
OIDC_TIMEOUT = env.float("OIDC_TIMEOUT_SECONDS", default=10.0)  # each request to the provider
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "home"
LOGOUT_REDIRECT_URL = "login"

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = False
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = VAR_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "studio.iam.auth.BearerTokenAuthentication",
        "studio.iam.auth.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_RENDERER_CLASSES": ["studio.renderers.JSONRenderer"],  # DRF's bytes, encoded by orjson
    "DEFAULT_PARSER_CLASSES": ["studio.parsers.JSONParser"],  # JSON with a bound on nesting
    "DEFAULT_FILTER_BACKENDS": ["studio.listing.FilterBackend"],
    "DEFAULT_PAGINATION_CLASS": "studio.listing.OffsetPagination",
    "DEFAULT_SCHEMA_CLASS": "studio.schema.StudioAutoSchema",
    "EXCEPTION_HANDLER": "studio.errors.exception_handler",
    "UNAUTHENTICATED_USER": "django.contrib.auth.models.AnonymousUser",
    # Credential checks (studio/iam/throttling.py): per client address and per account tried.
    "DEFAULT_THROTTLE_RATES": {
        "login-client": env.str("LOGIN_RATE_PER_CLIENT", default="30/min"),
        "login-account": env.str("LOGIN_RATE_PER_ACCOUNT", default="10/min"),
        # The CLI's single sign-on (studio/cli_device.py): pairs of codes asked per client address, user codes
        # tried per signed-in user.
        "cli-device": env.str("CLI_DEVICE_RATE_PER_CLIENT", default="10/min"),
        "cli-device-entry": env.str("CLI_DEVICE_RATE_PER_USER", default="10/min"),
    },
    # Behind a reverse proxy (BEHIND_PROXY), the client is the last address it adds to X-Forwarded-For.
    "NUM_PROXIES": 1 if env.bool("BEHIND_PROXY", default=False) else 0,
}

# The CLI's single sign-on (studio/iam/device_codes.py): how long a pair of codes lives, the poll interval.
CLI_DEVICE_CODE_SECONDS = env.int("CLI_DEVICE_CODE_SECONDS", default=600)
CLI_DEVICE_POLL_SECONDS = env.int("CLI_DEVICE_POLL_SECONDS", default=5)

SIMPLE_JWT = {
    "ACCESS_TOKEN_LIFETIME": timedelta(seconds=env.int("TOKEN_LIFETIME_SECONDS", default=3600)),
    # The refresh tokens of the password and single sign-on grants (studio/iam/tokens.py): each used once.
    "REFRESH_TOKEN_LIFETIME": timedelta(seconds=env.int("REFRESH_TOKEN_LIFETIME_SECONDS", default=7 * 86400)),
    "SIGNING_KEY": env.str("TOKEN_SIGNING_KEY", default=SECRET_KEY),
    "ALGORITHM": "HS256",
    "ISSUER": "paas-studio",
    "AUTH_HEADER_TYPES": ("Bearer",),
    "TOKEN_TYPE_CLAIM": "token_type",
    "JTI_CLAIM": "jti",
    "USER_ID_CLAIM": "user_id",
    "UPDATE_LAST_LOGIN": False,
    # A token carries a digest of its user's password hash: a changed password revokes every token issued before.
    "CHECK_REVOKE_TOKEN": True,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "PaaS Studio API",
    "DESCRIPTION": "Run:ai-compatible workloads, service profiles and the Kit App Streaming APIs.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "CAMELIZE_NAMES": False,
    "SECURITY": [{"bearerAuth": []}],
    "APPEND_COMPONENTS": {
        "securitySchemes": {"bearerAuth": {"type": "http", "scheme": "bearer", "bearerFormat": "JWT"}}
    },
    # A distributed training's replicas take the Kubeflow operator's restart policies (ExitCode too): their own name.
    "ENUM_NAME_OVERRIDES": {"ReplicaRestartPolicyEnum": ["Always", "OnFailure", "Never", "ExitCode"],
                            "RestartPolicyEnum": "workloads.specs.kinds.RESTART_POLICIES",
                            "NotificationChannelTypeEnum": "notifications.models.Channel.Type"},
    "DISABLE_ERRORS_AND_WARNINGS": True,
    "PREPROCESSING_HOOKS": ["studio.schema.without_client_url_copies"],
    "POSTPROCESSING_HOOKS": ["drf_spectacular.hooks.postprocess_schema_enums", "studio.schema.add_error_responses"],
}

REDIS_URL = env.str("REDIS_URL", default="")
# The cache holds throttling counters, shared by every process: Redis where there is one, else files under var/.
CACHES = {"default": {
    "BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": REDIS_URL, "KEY_PREFIX": "studio",
} if REDIS_URL else {
    "BACKEND": "django.core.cache.backends.filebased.FileBasedCache", "LOCATION": str(VAR_DIR / "cache"),
}}

# Celery: Redis in production and CI; the filesystem broker under var/ when REDIS_URL is unset.
# The filesystem broker has no host; naming one keeps kombu from warning that it "reverts to localhost".
CELERY_BROKER_URL = REDIS_URL or "filesystem://localhost/"
if not REDIS_URL:
    _broker_dir = VAR_DIR / "broker"
    for sub in ("queue", "processed", "control"):
        (_broker_dir / sub).mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT_OPTIONS = {
        "data_folder_in": str(_broker_dir / "queue"),
        "data_folder_out": str(_broker_dir / "queue"),
        "processed_folder": str(_broker_dir / "processed"),
        "control_folder": str(_broker_dir / "control"),
        "store_processed": False,
        # How often an idle (or fully prefetched) worker looks for messages: kombu's 1s default caps a worker
        # at about `concurrency` tasks a second.
        "polling_interval": env.float("CELERY_BROKER_POLLING_INTERVAL", default=0.1),
        "staging_folder": str(_broker_dir / "staging"),
    }
    (_broker_dir / "staging").mkdir(parents=True, exist_ok=True)
    CELERY_BROKER_TRANSPORT = "config.broker:Transport"  # kombu's filesystem transport, writing atomically
else:
    # A task a killed worker held comes back after this long; keep it above the longest retry backoff.
    CELERY_BROKER_TRANSPORT_OPTIONS = {"visibility_timeout": env.int("CELERY_VISIBILITY_TIMEOUT", default=3600)}
CELERY_BROKER_CONNECTION_RETRY_ON_STARTUP = True
CELERY_TASK_IGNORE_RESULT = True
CELERY_TASK_ACKS_LATE = True
CELERY_TASK_REJECT_ON_WORKER_LOST = True
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_TIMEZONE = "UTC"
CELERY_WORKER_HIJACK_ROOT_LOGGER = False
# Celery's Django fixup closes the database connection before and after every task unless this is set: each push
# then opened a PostgreSQL backend of its own (bench-real at 1,000: 1,052 sessions). Set, the fixup closes only every
# so many tasks, and config/celery.py keeps a worker's connection as a request's is kept: for DB_CONN_MAX_AGE.
CELERY_DB_REUSE_MAX = 10_000
# The sync follows each cluster by watch (`manage.py cluster_watch`, workloads/cluster/watcher.py): changes are applied
# as they arrive, gathered for SYNC_BATCH_SECONDS; every SYNC_INTERVAL_SECONDS the watcher checks the cluster's
# health and the repairs that came due; every SYNC_RESYNC_SECONDS it derives every workload again (the safety
# net), and beat's full sync round runs where no watcher follows the cluster. A watch request lasts between one
# and two WATCH_TIMEOUT_SECONDS, then resumes where it stopped.
SYNC_INTERVAL_SECONDS = env.float("SYNC_INTERVAL_SECONDS", default=5.0)
SYNC_BATCH_SECONDS = env.float("SYNC_BATCH_SECONDS", default=0.2)
SYNC_RESYNC_SECONDS = env.float("SYNC_RESYNC_SECONDS", default=1800.0)
WATCH_TIMEOUT_SECONDS = env.float("WATCH_TIMEOUT_SECONDS", default=300.0)
# A watcher's pass derives and writes this many workloads at a time: its memory is a part's, not the cluster's, and
# a small part leaves pymalloc fewer arenas pinned by the objects a pass keeps (docs/performance.md).
WATCH_FULL_PASS_PART = env.int("WATCH_FULL_PASS_PART", default=250)
# A watcher writes a queued workload's new place (queuePosition, queueLength, estimate) that moved only because
# others joined or left its queue at most this often: each pass moved every queued row (docs/performance.md). On KAI,
# a pass in which workloads only left their queues leaves the queues themselves to be computed then as well.
WATCH_PLACES_SECONDS = env.float("WATCH_PLACES_SECONDS", default=3.0)
METRICS_INTERVAL_SECONDS = env.float("METRICS_INTERVAL_SECONDS", default=15.0)
# Idle GPU reclaim and time limits (projects' schedulingRules, workloads/cluster/reclaim.py): how often the round runs,
# and the GPU utilisation (percent) under which a workload counts as idle.
RECLAIM_INTERVAL_SECONDS = env.float("RECLAIM_INTERVAL_SECONDS", default=30.0)
GPU_IDLE_THRESHOLD_PERCENT = env.float("GPU_IDLE_THRESHOLD_PERCENT", default=5.0)
METRICS_RETENTION_DAYS = env.int("METRICS_RETENTION_DAYS", default=7)
# Usage history (usage/rollup.py): hourly rows per workload for a window, daily rows per project, user and pool for
# years (0: kept for ever); a roll-up run every USAGE_ROLLUP_INTERVAL_SECONDS rolls at most USAGE_ROLLUP_MAX_HOURS.
USAGE_HOURLY_RETENTION_DAYS = env.int("USAGE_HOURLY_RETENTION_DAYS", default=35)
USAGE_DAILY_RETENTION_DAYS = env.int("USAGE_DAILY_RETENTION_DAYS", default=0)
USAGE_ROLLUP_INTERVAL_SECONDS = env.float("USAGE_ROLLUP_INTERVAL_SECONDS", default=600.0)
USAGE_ROLLUP_MAX_HOURS = env.int("USAGE_ROLLUP_MAX_HOURS", default=48)
CHARGEBACK_CURRENCY = env.str("CHARGEBACK_CURRENCY", default="USD")  # the unit of the node pools' prices
STREAMS_GOVERN_INTERVAL_SECONDS = env.float("STREAMS_GOVERN_INTERVAL_SECONDS", default=15.0)
# An exec, attach or port-forward session (workloads/api/streams.py): its credentials and rights checked again this
# often (an expired token, a removed membership or a deleted workload ends it), and its longest life.
STREAM_SESSION_RECHECK_SECONDS = env.float("STREAM_SESSION_RECHECK_SECONDS", default=60.0)
STREAM_SESSION_MAX_SECONDS = env.float("STREAM_SESSION_MAX_SECONDS", default=8 * 3600.0)
# Cluster tasks: retries of transient cluster errors (exponential backoff with jitter, capped).
KUBE_RETRY_BACKOFF = env.int("KUBE_RETRY_BACKOFF", default=1)
KUBE_RETRY_BACKOFF_MAX = env.int("KUBE_RETRY_BACKOFF_MAX", default=60)
KUBE_MAX_RETRIES = env.int("KUBE_MAX_RETRIES", default=10)
# The sync: a cluster that misses this many rounds in a row is Disconnected and its workloads Unknown;
# a task that should have pushed, suspended or removed gets this long before the sync does it again.
SYNC_DISCONNECTED_AFTER_ROUNDS = env.int("SYNC_DISCONNECTED_AFTER_ROUNDS", default=3)
SYNC_REPAIR_GRACE_SECONDS = env.float("SYNC_REPAIR_GRACE_SECONDS", default=60.0)
# A seed for the random suffixes of useGivenNameAsPrefix names (None: the system's randomness). Tests set it to
# make every submission draw the same suffixes, so that collisions happen on purpose.
WORKLOAD_NAME_SEED = None
SYNC_MAX_REPAIRS = env.int("SYNC_MAX_REPAIRS", default=200)  # orphan deletions per round
GPU_SCHEDULER_NAME = env.str("GPU_SCHEDULER_NAME", default="runai-scheduler")
# A new cluster's GPU scheduler (docs/scheduling.md): auto (KAI Scheduler where the cluster serves its Queue API),
# kai or none; each cluster's own setting (its page, `gpuScheduler` in the API) wins.
GPU_SCHEDULER = env.str("GPU_SCHEDULER", default="auto")
if GPU_SCHEDULER not in ("auto", "kai", "none"):
    raise ImproperlyConfigured(f"GPU_SCHEDULER must be auto, kai or none, not {GPU_SCHEDULER!r}.")
# PromQL per metric type, overriding workloads.cluster.collect.PROMETHEUS_QUERIES: {"TYPE": [template, "sum"|"mean", scale]}.
PROMETHEUS_QUERIES = env.json("PROMETHEUS_QUERIES", default={})
# Beat messages expire after two intervals: a worker that was down does not replay a backlog of rounds.
# One beat at a time: the scheduler sends due tasks only while it holds the beat lease (workloads/cluster/beat_lease.py).
CELERY_BEAT_SCHEDULER = "workloads.cluster.beat_lease:LeasedScheduler"
BEAT_LEASE_CHECK_SECONDS = env.float("BEAT_LEASE_CHECK_SECONDS", default=5.0)
CELERY_BEAT_SCHEDULE: dict[str, dict] = {
    # The fallback where no watcher follows a cluster (a round takes the watcher's lease, so it does nothing
    # while one does): a full sync round every SYNC_RESYNC_SECONDS.
    "clusters-sync": {
        "task": "workloads.tasks.clusters_sync",
        "schedule": SYNC_RESYNC_SECONDS,
        "options": {"expires": SYNC_RESYNC_SECONDS},
    },
    "clusters-collect-metrics": {
        "task": "workloads.tasks.clusters_collect_metrics",
        "schedule": METRICS_INTERVAL_SECONDS,
        "options": {"expires": METRICS_INTERVAL_SECONDS * 2},
    },
    "workloads-reclaim": {"task": "workloads.tasks.workloads_reclaim", "schedule": RECLAIM_INTERVAL_SECONDS,
                          "options": {"expires": RECLAIM_INTERVAL_SECONDS * 2}},
    "metrics-purge": {"task": "workloads.tasks.metrics_purge", "schedule": 3600.0, "options": {"expires": 3600.0}},
    # Kit streams (kit.sessions): those idle past their profile's idle time end; project queues move on.
    "usage-rollup": {"task": "usage.tasks.usage_rollup", "schedule": USAGE_ROLLUP_INTERVAL_SECONDS,
                     "options": {"expires": USAGE_ROLLUP_INTERVAL_SECONDS}},
    "streams-govern": {"task": "kit.tasks.streams_govern", "schedule": STREAMS_GOVERN_INTERVAL_SECONDS,
                       "options": {"expires": STREAMS_GOVERN_INTERVAL_SECONDS * 2}},
}

# Notifications (docs/notifications.md): Slack's Web API (a test points it at a loopback receiver), the time
# one request or SMTP session may take, when a pending workload is "pending too long" unless its subscription
# says, and the retries of a delivery that may pass later (exponential backoff with jitter, in seconds).
NOTIFICATIONS_SLACK_API_URL = env.str("NOTIFICATIONS_SLACK_API_URL", default="https://slack.com/api")
NOTIFICATIONS_TIMEOUT_SECONDS = env.float("NOTIFICATIONS_TIMEOUT_SECONDS", default=10.0)
NOTIFICATIONS_PENDING_MINUTES = env.int("NOTIFICATIONS_PENDING_MINUTES", default=30)
NOTIFICATIONS_SCAN_INTERVAL_SECONDS = env.float("NOTIFICATIONS_SCAN_INTERVAL_SECONDS", default=60.0)
NOTIFICATIONS_RETRY_BACKOFF = env.int("NOTIFICATIONS_RETRY_BACKOFF", default=5)
NOTIFICATIONS_RETRY_BACKOFF_MAX = env.int("NOTIFICATIONS_RETRY_BACKOFF_MAX", default=600)
NOTIFICATIONS_MAX_RETRIES = env.int("NOTIFICATIONS_MAX_RETRIES", default=8)
# Data volumes (docs/assets.md): each converges with its cluster again (a claim bound since, a copy gone).
DATAVOLUMES_SYNC_SECONDS = env.float("DATAVOLUMES_SYNC_SECONDS", default=120.0)
CELERY_BEAT_SCHEDULE["datavolumes-sync"] = {
    "task": "assets.tasks.datavolumes_sync", "schedule": DATAVOLUMES_SYNC_SECONDS,
    "options": {"expires": DATAVOLUMES_SYNC_SECONDS}}
CELERY_BEAT_SCHEDULE["notifications-pending-scan"] = {
    "task": "notifications.tasks.pending_scan", "schedule": NOTIFICATIONS_SCAN_INTERVAL_SECONDS,
    "options": {"expires": NOTIFICATIONS_SCAN_INTERVAL_SECONDS * 2}}

# Credentials made into Secrets (docs/assets.md): besides each change that enqueues it, every cluster's Secrets
# are converged this often, the safety net for what no event announces (a Secret edited or deleted by hand, a
# project moved to another department).
CREDENTIALS_RESYNC_SECONDS = env.float("CREDENTIALS_RESYNC_SECONDS", default=600.0)
CELERY_BEAT_SCHEDULE["credentials-resync"] = {
    "task": "assets.tasks.clusters_credentials_sync", "schedule": CREDENTIALS_RESYNC_SECONDS,
    "options": {"expires": CREDENTIALS_RESYNC_SECONDS}}

# The simulated cluster that `make run` starts and registers as the demo cluster.
KUBESIM_URL = env.str("KUBESIM_URL", default="")
KUBESIM_TOKEN = env.str("KUBESIM_TOKEN", default="kubesim-token")
# Networks besides public addresses where a cluster's API server or Prometheus may be (studio/clusters/access.py).
# Link-local and metadata addresses are refused whatever this says. Production: private ranges, not loopback;
# DEBUG (make run, with kubesim on 127.0.0.1): loopback too.
PRIVATE_NETWORKS = ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7"]
CLUSTER_ALLOWED_NETWORKS = env.list(
    "CLUSTER_ALLOWED_NETWORKS", default=PRIVATE_NETWORKS + (["127.0.0.0/8", "::1/128"] if DEBUG else []))
KUBE_REQUEST_TIMEOUT_SECONDS = env.float("KUBE_REQUEST_TIMEOUT_SECONDS", default=10.0)
KUBE_QPS = env.float("KUBE_QPS", default=50.0)

# When set, GET /metrics asks for `Authorization: Bearer <METRICS_TOKEN>`; unset, it is open (as /healthz).
METRICS_TOKEN = env.str("METRICS_TOKEN", default="")

LOG_LEVEL = env.str("LOG_LEVEL", default="INFO")
LOG_FORMAT = env.str("LOG_FORMAT", default="json")  # json | console
from studio.logs import logging_config  # noqa: E402  (needs LOG_LEVEL above)

LOGGING = logging_config(level=LOG_LEVEL, fmt=LOG_FORMAT)
