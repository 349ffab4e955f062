"""JSON logs through structlog, each line carrying the request id of the request that wrote it. Secrets that
travel in URL paths (a Kit client URL's token, `kcu_…`) are redacted from every line.

Quiet at LOG_LEVEL=INFO: each request is a DEBUG line (studio.request); a refusal the product meant (a 4xx) is the
one WARNING line of django.request, without the traceback Django attaches to a raised PermissionDenied; a 500 keeps
its traceback, printed once (tests/studio/test_quiet_log.py)."""

import logging
import re
import uuid

import structlog

REQUEST_ID_HEADER = "HTTP_X_REQUEST_ID"
REQUEST_ID_PATTERN = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:-]{0,63}")
PATH_SECRET = re.compile(r"\bkcu_[A-Za-z0-9_-]+")
REDACTED = "kcu_[redacted]"


def redacted(text: str) -> str:
    return PATH_SECRET.sub(REDACTED, text)


def _redact_event(logger, method_name, event_dict):
    """structlog processor: every string value of the line, redacted."""
    return {key: redacted(value) if isinstance(value, str) else value for key, value in event_dict.items()}


class ExpectedRefusals(logging.Filter):
    """Django logs a view's PermissionDenied (a 403) with its exception: a refusal the product meant, not a fault,
    so its line keeps no traceback. 5xx lines keep theirs."""

    def filter(self, record: logging.LogRecord) -> bool:
        if 400 <= getattr(record, "status_code", 0) < 500:
            record.exc_info, record.exc_text = None, None
        return True


class RedactSecrets(logging.Filter):
    """Standard library records (runserver's request lines, Django's error lines): their text, redacted."""

    def filter(self, record: logging.LogRecord) -> bool:
        if isinstance(record.msg, str):
            text = record.getMessage()
            if PATH_SECRET.search(text):
                record.msg, record.args = redacted(text), ()
        return True


def logging_config(*, level: str, fmt: str) -> dict:
    shared = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
        _redact_event,
    ]
    structlog.configure(
        processors=[*shared, structlog.stdlib.ProcessorFormatter.wrap_for_formatter],
        logger_factory=structlog.stdlib.LoggerFactory(),
        wrapper_class=structlog.stdlib.BoundLogger,
        cache_logger_on_first_use=True,
    )
    renderer = structlog.processors.JSONRenderer() if fmt == "json" else structlog.dev.ConsoleRenderer()
    return {
        "version": 1,
        "disable_existing_loggers": False,
        "formatters": {
            "structured": {
                "()": structlog.stdlib.ProcessorFormatter,
                "processors": [structlog.stdlib.ProcessorFormatter.remove_processors_meta, renderer],
                "foreign_pre_chain": shared,
            }
        },
        "filters": {"periodic": {"()": PeriodicChatter, "keep": level.upper() == "DEBUG"},
                    "secrets": {"()": RedactSecrets}, "refusals": {"()": ExpectedRefusals}},
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "structured",
                                 "filters": ["periodic", "secrets", "refusals"]}},
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            # Django's own handlers go (named here with none, the logger keeps none and its lines reach the root's
            # console): under DEBUG its console handler printed each of its lines, and their tracebacks, a second
            # time; its mail_admins handler mails nobody (no ADMINS).
            "django": {"handlers": [], "level": "INFO"},
            # runserver's request lines: only its errors (studio.request logs every request, django.request each
            # 4xx once), through the console handler, so that its filters apply (its own handler would print a
            # client URL's token)
            "django.server": {"handlers": ["console"], "level": "ERROR", "propagate": False},
            "django.db.backends": {"level": "WARNING"},
            "kubernetes": {"level": "WARNING"},
            "urllib3": {"level": "WARNING"},
        },
    }


class PeriodicChatter(logging.Filter):
    """Celery logs each run of the beat's periodic tasks at INFO (beat's "Sending due task", the worker's
    "received" and "succeeded"): with a sync every second that floods the log. Those lines are DEBUG-level
    chatter, shown only when LOG_LEVEL is DEBUG; tasks a user caused (push, suspend, ...) keep their INFO lines."""

    LOGGERS = frozenset({"celery.beat", "celery.worker.strategy", "celery.app.trace"})
    TASKS = re.compile(r"\btasks\.(clusters?_sync|clusters?_collect_metrics|metrics_purge|workloads_reclaim|"
                       r"streams_govern)\b")

    def __init__(self, keep: bool = False):
        super().__init__()
        self.keep = keep

    def filter(self, record: logging.LogRecord) -> bool:
        if record.name not in self.LOGGERS or record.levelno != logging.INFO:
            return True
        if not self.TASKS.search(record.getMessage()):
            return True
        record.levelno, record.levelname = logging.DEBUG, "DEBUG"
        return self.keep


def current_request_id() -> str | None:
    return structlog.contextvars.get_contextvars().get("request_id")


class RequestIdMiddleware:
    """Takes X-Request-ID from the caller (or makes one), binds it to every log line and echoes it back."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.log = structlog.get_logger("studio.request")

    def __call__(self, request):
        # A caller's id is kept only when it is short and plain (it lands in logs and the audit trail).
        given = request.META.get(REQUEST_ID_HEADER, "")
        request.id = given if REQUEST_ID_PATTERN.fullmatch(given) else uuid.uuid4().hex
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request.id)
        response = self.get_response(request)
        response["X-Request-ID"] = request.id
        if not request.path.startswith(("/static/", "/healthz", "/metrics")):
            self.log.debug("request", method=request.method, path=request.path, status=response.status_code)
        structlog.contextvars.clear_contextvars()
        return response

