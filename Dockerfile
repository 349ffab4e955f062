FROM python:3.11-slim
ENV PYTHONUNBUFFERED=1 PIP_NO_CACHE_DIR=1 STUDIO_VAR_DIR=/app/var
WORKDIR /app
COPY pyproject.toml ./
RUN pip install --upgrade pip && mkdir -p studio && pip install -e . && rm -rf studio
COPY . .
RUN pip install -e . && pip install ./cli && DATABASE_URL=sqlite:////tmp/build.sqlite3 python manage.py collectstatic --noinput \
    && groupadd --system --gid 10001 studio \
    && useradd --system --uid 10001 --gid 10001 --home-dir /app --shell /usr/sbin/nologin studio \
    && mkdir -p /app/var && chown -R studio /app/var
# Web, worker and beat run unprivileged: the code and packages stay root's and read-only to them.
USER 10001:10001
EXPOSE 8000
# gevent workers (also gunicorn.conf.py's): a client that sends its body slowly holds a greenlet, not a worker.
CMD ["gunicorn", "config.wsgi:application", "--bind", "0.0.0.0:8000", "--workers", "3", "--worker-class", "gevent", \
     "--access-logfile", "-"]
