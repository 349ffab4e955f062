# The two commands: `make run` and `make test`. Both set up the virtualenv first.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed-$(shell cat pyproject.toml cli/pyproject.toml | cksum | cut -d' ' -f1)
PYTEST_ARGS ?=
# One pytest process more than the cores, four at most (pytest-xdist): the tests wait on browsers, workers and
# clusters much of the time (two processes used 118% of two cores). On two cores three keep both busy (every
# process sampled: 3,793 CPU s in 2,041 s, Chromium 36% of it) and four took as long (35:01 against 34:54).
# TEST_PROCESSES=0 runs them all in this process.
TEST_PROCESSES ?= $(shell echo $$(( $$(nproc) + 1 )))
# Random keys of this checkout (SECRET_KEY, FIELD_ENCRYPTION_KEY), made once and kept with mode 0600; the
# targets that start the product read them (a key set in the environment wins). Tests make their own.
DEV_KEYS := $(or $(STUDIO_VAR_DIR),var)/secrets.env
WITH_KEYS := set -a && . $(abspath $(DEV_KEYS)) && set +a &&
# The simulated clusters of run, bench and faults listen on loopback, which production does not allow.
export CLUSTER_ALLOWED_NETWORKS ?= 127.0.0.0/8,::1/128,10.0.0.0/8,172.16.0.0/12,192.168.0.0/16,fc00::/7

.PHONY: install run test e2e-real dex registry bench bench-real faults lint system-deps services migrate demo vendor

$(STAMP): pyproject.toml cli/pyproject.toml
	test -x $(PY) || python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	$(PY) -m pip install -q -e ./cli  # the researchers' CLI, `studio` (docs/cli.md): its own package
	rm -f $(VENV)/.installed-* && touch $(STAMP)

install: $(STAMP)

$(DEV_KEYS):
	python3 scripts/dev_keys.py $@

system-deps:
	./scripts/system_deps.sh

# PostgreSQL and Redis on loopback for CI, bench and faults: installed from Debian's packages and started when
# missing (scripts/ci_services.sh); servers that already answer are used as they are.
services:
	./scripts/ci_services.sh

migrate: install $(DEV_KEYS)
	$(WITH_KEYS) $(PY) manage.py migrate --noinput -v 0

demo: migrate
	$(WITH_KEYS) $(PY) manage.py demo_setup
	$(WITH_KEYS) $(PY) manage.py system_profiles

run: demo
	$(WITH_KEYS) $(PY) scripts/run_dev.py

test: install system-deps registry
	$(PY) -m pytest -m "not real and not dex" -n $(TEST_PROCESSES) --maxprocesses 4 --dist loadfile $(PYTEST_ARGS)

# The product against a real cluster — Kubernetes, KAI Scheduler, KWOK and the Kubeflow training operator, built
# from Go modules by scripts/kube/build_stack.sh before pytest (cached; it prints versions and time) — and single
# sign-on against a real OpenID Connect provider, Dex (built from its Go module: `make dex`) (docs/real-cluster.md).
e2e-real: install system-deps dex
	./scripts/system_deps.sh e2e-real
	./scripts/kube/build_stack.sh
	$(PY) -m pytest -m "real or dex" $(PYTEST_ARGS)

# Dex, pinned in scripts/dex/go.mod, built once into ~/.cache/paas-studio/dex (a few minutes cold, niced).
dex:
	./scripts/dex/build.sh

# The CNCF distribution registry, pinned in scripts/registry/go.mod, built once into ~/.cache/paas-studio/registry:
# the container registry that tests/assets' registry tests start (a few minutes cold, niced).
registry:
	./scripts/registry/build.sh

bench: install services $(DEV_KEYS)
	$(WITH_KEYS) $(PY) -m bench

# PaaS Studio beside raw Kubernetes on e2e-real's cluster (bench/versus_kube.py): one-GPU trainings by 16 clients
# through the API, then the same Jobs straight to the cluster; time to every pod bound, submit -> bound p50/p90/p99.
# Minutes of a real cluster per size, so not in `make bench`: `make bench-real COUNT="1000 5000"`.
COUNT ?= 1000
bench-real: install system-deps services $(DEV_KEYS)
	./scripts/system_deps.sh e2e-real
	./scripts/kube/build_stack.sh
	$(WITH_KEYS) $(PY) -m bench.versus_kube $(foreach n,$(COUNT),--count $(n))

faults: install services $(DEV_KEYS)
	@failed=""; for scenario in worker_kill watcher_kill redis_stop kubesim_outage postgres_restart apiserver_restart; do \
		$(WITH_KEYS) $(PY) -m scripts.faults.$$scenario || failed="$$failed $$scenario"; \
	done; if [ -n "$$failed" ]; then echo "make faults: FAILED:$$failed"; exit 1; fi

lint: install
	$(VENV)/bin/ruff check .
	$(VENV)/bin/lint-imports
	$(PY) scripts/house_rules.py

# Re-fetch the vendored front-end files (Tabler, its icons, Chart.js, axe-core) from the npm registry.
vendor:
	./scripts/vendor_static.sh
