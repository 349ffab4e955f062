"""gunicorn.conf.py: read by gunicorn from the working directory, and its worker hook tunes the collector."""

import json
import re
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_gunicorn_reads_the_file_and_its_worker_hook_freezes_the_loaded_objects():
    printed = subprocess.run([sys.executable, "-m", "gunicorn", "--print-config", "config.wsgi:application"],
                             cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert printed.returncode == 0, printed.stderr
    # gevent workers (security round 3, S21: a slow body holds a greenlet, not a worker)
    assert re.search(r"^worker_class\s+= gevent$", printed.stdout, re.M), printed.stdout
    # the file's hook, not gunicorn's default (<PostWorkerInit.post_worker_init()>)
    assert re.search(r"^post_worker_init\s+= <post_worker_init\(\)>$", printed.stdout, re.M), printed.stdout
    hook = ("import gc, json, runpy; conf = runpy.run_path('gunicorn.conf.py'); conf['post_worker_init'](None); "
            "print(json.dumps([gc.get_threshold(), gc.get_freeze_count() > 0]))")
    ran = subprocess.run([sys.executable, "-c", hook], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert ran.returncode == 0, ran.stderr
    assert json.loads(ran.stdout) == [[20_000, 50, 100], True]


def test_the_image_starts_gevent_workers_too():
    command = json.loads(re.search(r"^CMD (\[.*?\])$", (ROOT / "Dockerfile").read_text().replace("\\\n", ""),
                                   re.M | re.S)[1])
    assert command[:2] == ["gunicorn", "config.wsgi:application"]
    assert command[command.index("--worker-class") + 1] == "gevent"
