# The two commands: `make run` and `make test`. Both set up the virtualenv first.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cksum pyproject.toml | cut -d' ' -f1)
PYTEST_ARGS ?=

.PHONY: install run test bench faults lint system-deps migrate demo

$(STAMP): pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	rm -f $(VENV)/.installed-* && touch $(STAMP)

install: $(STAMP)

system-deps:
	./scripts/system_deps.sh

migrate: install
	$(PY) manage.py migrate --noinput

demo: migrate
	$(PY) manage.py demo_setup
	$(PY) manage.py system_profiles

run: demo
	$(PY) scripts/run_dev.py

test: install system-deps
	$(PY) -m pytest $(PYTEST_ARGS)

bench: install
	$(PY) -m bench

faults: install
	$(PY) -m scripts.faults.worker_kill
	$(PY) -m scripts.faults.redis_stop
	$(PY) -m scripts.faults.kubesim_outage
	$(PY) -m scripts.faults.postgres_restart

lint: install
	$(VENV)/bin/ruff check .
