"""A researcher's session with the `studio` command, end to end: an access key's login, a workspace previewed with
--dry-run then submitted, listed, described, its log read and followed, suspended, resumed and deleted — a live
server, a real Celery worker and the simulated cluster (kubesim). Its transcript is the one in docs/cli.md
(STUDIO_REFRESH_DOCS=1 writes docs/cli-transcript.txt)."""

import pytest

from studio.models import AccessKey
from tests import docs_output
from tests.cli.support import Cli
from tests.workloads.cluster_support import wait_for
from workloads import tasks

pytestmark = [pytest.mark.worker, pytest.mark.django_db(transaction=True)]


def test_a_member_submits_follows_and_manages_a_workspace(live_server, worker, sim_org, tmp_path):
    cli = Cli(home=tmp_path)
    project = sim_org.project.name
    key, secret = AccessKey.issue(user=sim_org.user, name="laptop")
    login = cli("login", "--url", live_server.url, "--client-id", key.client_id,
                env={"STUDIO_CLIENT_SECRET": secret},
                shown=f"STUDIO_CLIENT_SECRET=… studio login --url {live_server.url} --client-id {key.client_id}")
    assert login.code == 0 and f"as {sim_org.user.username}" in login.out, login
    assert cli("config", "project", project).code == 0
    cli("config", "show")

    preview = cli("workspace", "submit", "lab", "-i", "jupyter/base-notebook", "--gpu-portion-request", "0.5",
                  "--cpu-memory-request", "1G", "-e", "GREETING=hello", "--dry-run")
    assert preview.code == 0 and "nothing was created" in preview.out and "Deployment/lab" in preview.out, preview
    previewed = cli("workspace", "submit", "lab", "-i", "jupyter/base-notebook", "--gpu-portion-request", "0.5",
                    "--dry-run", "-o", "json", record=False).json()
    assert previewed["dryRun"] is True and previewed["quota"]["allowed"] is True
    assert cli("workspace", "list", "-o", "json").json() == []  # the dry run created nothing

    submitted = cli("workspace", "submit", "lab", "-i", "jupyter/base-notebook", "--gpu-portion-request", "0.5",
                    "--cpu-memory-request", "1G", "-e", "GREETING=hello")
    assert submitted.code == 0 and "Submitted workspace 'lab'" in submitted.out, submitted

    def sync():
        tasks.cluster_sync.apply(args=[str(sim_org.cluster.pk)])

    def phase():
        return Cli(home=tmp_path)("workspace", "describe", "lab", "-o", "json").json()["phase"]

    wait_for(lambda: phase() == "Running", step=sync, timeout=60, what="the workspace running")
    listed = cli("workspace", "list")
    assert "lab" in listed.out and "Running" in listed.out and "0.5" in listed.out, listed
    rows = cli("workspace", "list", "-o", "json", record=False).json()
    assert [(r["name"], r["phase"], r["projectName"]) for r in rows] == [("lab", "Running", project)]
    described = cli("workspace", "describe", "lab")
    assert "Phase:" in described.out and "jupyter/base-notebook" in described.out, described
    detail = cli("workspace", "describe", "lab", "-o", "yaml", record=False)
    assert "spec:" in detail.out and "gpuPortionRequest: 0.5" in detail.out

    wait_for(lambda: cli("workspace", "logs", "lab", record=False).out.count("\n") >= 3, what="a few lines of log")
    cli("workspace", "logs", "lab")
    logs = cli("workspace", "logs", "lab", "--tail", "2")
    assert logs.code == 0 and len(logs.out.splitlines()) == 2, logs
    assert cli("workspace", "logs", "lab", "--since", "3600", "--pod", "nosuch", "--wait-timeout", "0",
               record=False).code == 3
    # -f streams until the server's stream ends (kubesim's API server answers a follow with the log so far;
    # a real cluster's keeps it open while the container runs, up to the server's five minutes) or Ctrl-C.
    followed = cli("workspace", "logs", "lab", "-f", "--tail", "3")
    assert followed.code == 0 and len(followed.out.splitlines()) == 3, followed
    assert followed.out.splitlines()[-1].startswith("kubesim: main working, step ")

    assert cli("workspace", "suspend", "lab").code == 0
    wait_for(lambda: phase() == "Stopped", step=sync, timeout=60, what="the workspace stopped")
    assert "Stopped" in cli("workspace", "list").out
    assert cli("workspace", "resume", "lab").code == 0
    wait_for(lambda: phase() == "Running", step=sync, timeout=60, what="the workspace running again")
    cli("workspace", "list")
    deleted = cli("workspace", "delete", "lab", "-o", "json")
    assert deleted.code == 0 and deleted.json()["deleted"] is True
    assert cli("workspace", "list", "-o", "json").json() == []
    gone = cli("workspace", "describe", "lab")
    assert gone.code == 3 and "not found" in gone.err

    text = "\n".join(cli.transcript) + "\n"
    assert secret not in text
    (docs_output.folder() / "cli-transcript.txt").write_text(text)
