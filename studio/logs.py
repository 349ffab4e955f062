"""JSON logs through structlog, each line carrying the request id of the request that wrote it."""

import uuid

import structlog

REQUEST_ID_HEADER = "HTTP_X_REQUEST_ID"


def logging_config(*, level: str, fmt: str) -> dict:
    shared = [
        structlog.contextvars.merge_contextvars,
        structlog.stdlib.add_log_level,
        structlog.stdlib.add_logger_name,
        structlog.processors.TimeStamper(fmt="iso", utc=True),
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
        "handlers": {"console": {"class": "logging.StreamHandler", "formatter": "structured"}},
        "root": {"handlers": ["console"], "level": level},
        "loggers": {
            "django.db.backends": {"level": "WARNING"},
            "kubernetes": {"level": "WARNING"},
            "urllib3": {"level": "WARNING"},
        },
    }


def current_request_id() -> str | None:
    return structlog.contextvars.get_contextvars().get("request_id")


class RequestIdMiddleware:
    """Takes X-Request-ID from the caller (or makes one), binds it to every log line and echoes it back."""

    def __init__(self, get_response):
        self.get_response = get_response
        self.log = structlog.get_logger("studio.request")

    def __call__(self, request):
        request_id = request.META.get(REQUEST_ID_HEADER) or uuid.uuid4().hex
        request.id = request_id[:64]
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request.id)
        response = self.get_response(request)
        response["X-Request-ID"] = request.id
        if not request.path.startswith(("/static/", "/healthz", "/metrics")):
            self.log.info("request", method=request.method, path=request.path, status=response.status_code)
        structlog.contextvars.clear_contextvars()
        return response

