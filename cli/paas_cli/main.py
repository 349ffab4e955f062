"""`studio`: log in, choose a project, and submit, list, describe, follow and manage workloads.

Every command talks to the server's HTTP API (the Run:ai-compatible workloads API) with the bearer token that
`studio login` got for an access key or through single sign-on (paas_cli.sso). Exit codes: paas_cli.client."""

from __future__ import annotations

import json
import re
import time
from datetime import datetime, timedelta, timezone

import click

from paas_cli import __version__, output, streams, submit
from paas_cli.client import NOT_FOUND, USAGE, Api, CliError
from paas_cli.config import Config, ConfigError
from paas_cli.sso import device_login

UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$")
# The command word (also the workloads list's `type`) -> its collection under /api/v1/workloads/.
KINDS = {"workspace": "workspaces", "training": "trainings", "distributed": "distributed",
         "inference": "inferences"}
SUSPENDABLE = ("workspace", "training", "distributed")
STATE = {"output": "table"}
INTERRUPTED = 130  # Ctrl-C, as a shell reports it (it ends `logs -f` with 0)


class Root(click.Group):
    """Reports a CliError on stderr (the server's JSON error body with `-o json`) and exits with its code."""

    def invoke(self, ctx):
        try:
            return super().invoke(ctx)
        except (CliError, ConfigError) as exc:
            error = exc if isinstance(exc, CliError) else CliError(str(exc), USAGE)
            if STATE["output"] == "json" and error.body:
                click.echo(json.dumps(error.body), err=True)
            else:
                click.echo(f"studio: {error.message}", err=True)
            ctx.exit(error.code)
        except KeyboardInterrupt:
            click.echo("", err=True)
            ctx.exit(INTERRUPTED)


def _set_output(ctx, param, value):
    STATE["output"] = value
    return value


def output_option(function):
    return click.option("-o", "--output", "fmt", type=click.Choice(output.FORMATS), default="table",
                        show_default=True, callback=_set_output, is_eager=True,
                        help="table for people; json or yaml (the server's fields) for scripts.")(function)


def project_option(function):
    return click.option("-p", "--project", metavar="NAME",
                        help="The project (default: `studio config project`, or STUDIO_PROJECT).")(function)


def session() -> tuple[Config, Api]:
    config = Config.load()
    return config, Api(config.url, config.token)


def project_named(api: Api, name: str) -> dict:
    found = api.get("/api/v1/org-unit/projects", filterBy=f"name=={name}", limit=500)
    for project in found.get("projects", []):
        if project.get("name") == name:
            return project
    raise CliError(f"project {name!r} not found (or you are not one of its members)", NOT_FOUND)


def project_of(config: Config, given: str | None) -> str:
    name = given or config.project
    if not name:
        raise CliError("no project: pass -p NAME, or run `studio config project NAME`", USAGE)
    return name


def workload_named(api: Api, kind: str, name: str, project: str) -> dict:
    """The live workload of this kind and name in the project (a workload id is taken too)."""
    if UUID.match(name):
        try:
            row = api.get(f"/api/v1/workloads/{name}")
        except CliError as exc:
            if exc.code != NOT_FOUND:
                raise
        else:
            if row.get("type") == kind:
                return row
    else:
        filters = [f"type=={kind}", f"projectName=={project}", f"name=={name}"]
        for row in api.get("/api/v1/workloads", filterBy=filters, limit=500).get("workloads", []):
            if row.get("name") == name:
                return row
    raise CliError(f"{kind} {name!r} not found in project {project!r}", NOT_FOUND)


@click.group(cls=Root, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(__version__, "--version", prog_name="studio")
def cli():
    """PaaS Studio's command line: `studio login`, then `studio training submit NAME -i IMAGE …`."""


# --- login, logout, config -------------------------------------------------------------------------------------

@cli.command()
@click.option("--url", metavar="URL", help="The server, e.g. https://studio.example.com (default: the last one).")
@click.option("--client-id", envvar="STUDIO_CLIENT_ID", metavar="ID", help="The access key's client id "
              "(or STUDIO_CLIENT_ID).")
@click.option("--client-secret", envvar="STUDIO_CLIENT_SECRET", metavar="SECRET",
              help="The access key's secret (or STUDIO_CLIENT_SECRET; asked for when absent).")
@click.option("--sso", is_flag=True, help="Single sign-on: approve a code in the browser (opened when possible).")
@click.option("--device", is_flag=True, help="As --sso, without opening a browser: open the printed page on any "
              "device.")
@output_option
def login(url, client_id, client_secret, sso, device, fmt):
    """Log in with an access key (the portal's Access keys, or POST /api/v1/access-keys), or with --sso."""
    config = Config.load()
    url = (url or config.url or "").rstrip("/")
    if not url:
        raise click.UsageError("no server: pass --url URL (or set STUDIO_URL)")
    api = Api(url)
    if sso or device:
        if client_id:
            raise click.UsageError("--sso and --device sign in through the browser: drop --client-id")
        granted = device_login(api, open_browser=not device)
        token, lifetime = granted["access_token"], granted.get("expires_in")
    else:
        client_id = client_id or click.prompt("Client id")
        client_secret = client_secret or click.prompt("Client secret", hide_input=True)
        granted = api.post("/api/v1/token", {"grantType": "client_credentials", "clientId": client_id,
                                             "clientSecret": client_secret}, auth=False)
        token, lifetime = granted["accessToken"], granted.get("expiresIn")
    api.token = token
    me = api.get("/api/v1/me")
    expires = datetime.now(timezone.utc) + timedelta(seconds=int(lifetime or 0))
    config.values.update(url=url, token=token, clientId=client_id,
                         expiresAt=expires.replace(microsecond=0).isoformat())
    config.save()
    result = {"url": url, "username": me.get("username"), "clientId": client_id,
              "expiresAt": config.values["expiresAt"], "config": str(config.path)}
    output.emit(result, fmt, lambda r: click.echo(
        f"Logged in to {r['url']} as {r['username']} (until {r['expiresAt']}; saved in {r['config']})"))


@cli.command()
@output_option
def logout(fmt):
    """Revoke the saved token and forget it."""
    config = Config.load()
    token = config.values.get("token")
    if token and config.url:
        try:
            Api(config.url, token).request("POST", "/api/v1/token/revoke")
        except CliError:
            pass  # an expired or revoked token: forgetting it is all that is left to do
    config.values.pop("token", None)
    config.values.pop("expiresAt", None)
    config.save()
    output.emit({"loggedOut": True, "config": str(config.path)}, fmt, lambda r: click.echo("Logged out."))


@cli.group("config")
def config_group():
    """The default project, and what the CLI is set to."""


@config_group.command("project")
@click.argument("name")
@output_option
def config_project(name, fmt):
    """Make NAME the default project of later commands."""
    config, api = session()
    project = project_named(api, name)
    config.values["project"] = name
    config.save()
    result = {"project": name, "projectId": project.get("id"), "clusterId": project.get("clusterId")}
    output.emit(result, fmt, lambda r: click.echo(f"Default project: {name} (id {r['projectId']})"))


@config_group.command("show")
@output_option
def config_show(fmt):
    """The server, the project and whether a token is set (never the token itself)."""
    config = Config.load()
    result = {"config": str(config.path), "url": config.url, "urlFrom": config.source_of("url"),
              "project": config.project, "projectFrom": config.source_of("project"),
              "loggedIn": bool(config.token), "tokenFrom": config.source_of("token"),
              "clientId": config.values.get("clientId"), "expiresAt": config.values.get("expiresAt")}
    output.emit(result, fmt, lambda r: output.pairs([
        ("Config file", r["config"]), ("Server", f"{r['url'] or '-'} ({r['urlFrom']})"),
        ("Project", f"{r['project'] or '-'} ({r['projectFrom']})"),
        ("Logged in", f"yes ({r['tokenFrom']})" if r["loggedIn"] else "no"),
        ("Client id", r["clientId"] or "-"), ("Token expires", r["expiresAt"] or "-")]))


# --- workloads of each kind ------------------------------------------------------------------------------------

def kind_group(kind: str) -> click.Group:
    collection = KINDS[kind]

    @click.group(kind, help=f"Submit and manage {collection if kind != 'distributed' else 'distributed trainings'}.")
    def group():
        pass

    def submit_command(function):
        options = [
            click.argument("name"),
            project_option,
            click.option("-i", "--image", required=True, help="The container image."),
            click.option("-g", "--gpu-devices-request", "--gpu", "gpus", type=click.IntRange(min=0),
                         help="Whole GPUs (devices) per pod."),
            click.option("--gpu-portion-request", "portion", type=float, help="A portion of each GPU, 0 to 1."),
            click.option("--gpu-memory-request", "gpu_memory", metavar="QUANTITY",
                         help="GPU memory per device, e.g. 10G."),
            click.option("--cpu-core-request", "cpu", type=float, help="CPU cores, e.g. 0.5."),
            click.option("--cpu-memory-request", "memory", metavar="QUANTITY", help="Memory, e.g. 1G."),
            click.option("--command", "command_flag", is_flag=True,
                         help="The first word after `--` is the command (the image's entry point otherwise)."),
            click.option("-e", "--environment", multiple=True, metavar="KEY=VALUE", help="An environment variable."),
            click.option("--node-pools", multiple=True, metavar="POOL[,POOL]", help="Node pools, in order."),
            click.option("--existing-pvc", multiple=True, metavar="claimname=NAME,path=/PATH[,readonly]",
                         help="Mount an existing PersistentVolumeClaim."),
            click.option("--name-prefix", is_flag=True, help="Use NAME as a prefix (a random suffix is added)."),
            click.option("--dry-run", is_flag=True,
                         help="Show what the server would create, the quota and policy decisions and the "
                              "scheduler's forecast; create nothing."),
            output_option,
            click.argument("args", nargs=-1, type=click.UNPROCESSED),
        ]
        for option in reversed(options):
            function = option(function)
        return group.command("submit", help=f"Submit a {kind}: `studio {kind} submit NAME -i IMAGE [flags] "
                                            f"[-- ARGS…]`.")(function)

    def do_submit(name, project, image, gpus, portion, gpu_memory, cpu, memory, command_flag, environment,
                  node_pools, existing_pvc, name_prefix, dry_run, fmt, args, extra, top=None):
        config, api = session()
        project_name = project_of(config, project)
        body_spec = submit.spec(image=image, command_flag=command_flag, args=args,
                                env=submit.environment(environment), node_pools=node_pools,
                                pvcs=submit.existing_pvcs(existing_pvc),
                                compute_body=submit.compute(gpus=gpus, portion=portion, gpu_memory=gpu_memory,
                                                            cpu=cpu, memory=memory), extra=extra)
        target = project_named(api, project_name)
        body = {"name": name, "projectId": str(target["id"]), "clusterId": target["clusterId"], "spec": body_spec,
                **(top or {})}
        if name_prefix:
            body["useGivenNameAsPrefix"] = True
        path = f"/api/v1/workloads/{collection}"
        if dry_run:
            preview = api.post(path, body, params={"dryRun": "true"})
            output.emit(preview, fmt, lambda p: print_preview(kind, project_name, p))
            return
        created = api.post(path, body)
        output.emit(created, fmt, lambda c: click.echo(
            f"Submitted {kind} {c['name']!r} to project {project_name!r} (id {c['workloadId']}, "
            f"phase {c.get('actualPhase')})."))

    if kind == "training":
        @submit_command
        @click.option("--parallelism", type=click.IntRange(min=1), help="Pods that run at once.")
        @click.option("--completions", type=click.IntRange(min=1), help="Pods that must succeed.")
        def submit_training(parallelism, completions, **flags):
            do_submit(**flags, extra={"parallelism": parallelism, "completions": completions})
    elif kind == "distributed":
        @submit_command
        @click.option("--framework", type=click.Choice(["PyTorch", "TF", "MPI", "XGBoost", "JAX"]),
                      default="PyTorch", show_default=True, help="The distributed framework.")
        @click.option("--workers", type=click.IntRange(min=1), default=1, show_default=True,
                      help="Worker pods (besides the master).")
        def submit_distributed(framework, workers, **flags):
            do_submit(**flags, extra={"distributedFramework": framework, "numWorkers": workers},
                      top={"masterSpecSameAsWorker": True} if framework != "JAX" else None)
    elif kind == "inference":
        @submit_command
        @click.option("--serving-port", type=click.IntRange(1, 65535), help="The container port it serves on.")
        def submit_inference(serving_port, **flags):
            do_submit(**flags, extra={"servingPort": {"container": serving_port} if serving_port else None})
    else:
        @submit_command
        def submit_workspace(**flags):
            do_submit(**flags, extra={})

    @group.command("list")
    @project_option
    @click.option("-A", "--all-projects", is_flag=True, help="Every project you can see.")
    @output_option
    def list_command(project, all_projects, fmt):
        """The live workloads of this kind in the project."""
        config, api = session()
        filters = [f"type=={kind}"]
        name = None if all_projects else (project or config.project)
        if name:
            filters.append(f"projectName=={name}")
        rows = api.get("/api/v1/workloads", filterBy=filters, limit=500, sortBy="createdAt",
                       sortOrder="desc").get("workloads", [])
        output.emit(rows, fmt, lambda rs: output.columns(
            [[r.get("name"), r.get("projectName"), r.get("phase"), gpus_of(r),
              pods_of(r), r.get("submittedBy"), age(r)]
             for r in rs], ["NAME", "PROJECT", "PHASE", "GPUS", "PODS", "SUBMITTED BY", "AGE"]))

    @group.command("describe")
    @click.argument("name")
    @project_option
    @output_option
    def describe(name, project, fmt):
        """The workload: its phase and why, its spec, and its pods."""
        config, api = session()
        row = workload_named(api, kind, name, project_of(config, project))
        workload = api.get(f"/api/v1/workloads/{row['id']}")
        detail = api.get(f"/api/v1/workloads/{collection}/{row['id']}")
        pods = api.get(f"/api/v1/workloads/{row['id']}/pods").get("pods", [])
        result = {**workload, "spec": detail.get("spec"), "pods": pods}
        output.emit(result, fmt, print_description)

    @group.command("logs")
    @click.argument("name")
    @project_option
    @click.option("-f", "--follow", is_flag=True, help="Keep streaming new lines.")
    @click.option("--tail", type=click.IntRange(min=0), help="Only the last N lines.")
    @click.option("--since", "since", type=click.IntRange(min=1), metavar="SECONDS", help="Only newer lines.")
    @click.option("--pod", metavar="NAME", help="Which pod (default: the first).")
    @click.option("-c", "--container", metavar="NAME", help="Which container of the pod.")
    @click.option("--wait-timeout", type=click.IntRange(min=0), default=60, show_default=True, metavar="SECONDS",
                  help="How long to wait for a pod to start.")
    def logs(name, project, follow, tail, since, pod, container, wait_timeout):
        """A pod's log, as text (the log is printed as it is: --output does not apply)."""
        config, api = session()
        row = workload_named(api, kind, name, project_of(config, project))
        chosen = wait_for_pod(api, row, pod, wait_timeout)
        params = {"follow": "true" if follow else None, "tailLines": tail, "sinceSeconds": since,
                  "container": container}
        response = api.request("GET", f"/api/v1/workloads/{row['id']}/pods/{chosen['id']}/logs", stream=True,
                               params={k: v for k, v in params.items() if v is not None})
        out = click.get_binary_stream("stdout")
        try:
            for chunk in response.iter_content(chunk_size=None):
                out.write(chunk)
                out.flush()
        except KeyboardInterrupt:
            pass
        finally:
            response.close()

    def action(verb: str, method: str):
        @group.command(verb)
        @click.argument("name")
        @project_option
        @output_option
        def command(name, project, fmt):
            config, api = session()
            row = workload_named(api, kind, name, project_of(config, project))
            suffix = "" if verb == "delete" else f"/{verb}"
            answer = api.json(method, f"/api/v1/workloads/{collection}/{row['id']}{suffix}")
            if answer is None:
                answer = {"workloadId": row["id"], "name": row["name"], "deleted": True}
            output.emit(answer, fmt, lambda a: click.echo(
                f"{kind.capitalize()} {row['name']!r}: {verb} requested ({a.get('message', 'done')})"
                if verb != "delete" else f"{kind.capitalize()} {row['name']!r} deleted."))

        command.help = {"suspend": "Stop the workload's pods; `resume` starts them again.",
                        "resume": "Start a suspended workload again.",
                        "delete": "Delete the workload and its cluster objects."}[verb]

    if kind in SUSPENDABLE:
        action("suspend", "POST")
        action("resume", "POST")
    action("delete", "DELETE")

    def pod_options(function):
        for option in reversed([
            click.argument("name"), project_option,
            click.option("--pod", metavar="NAME", help="Which pod (default: the first running one)."),
        ]):
            function = option(function)
        return function

    def terminal_params(pod, container, stdin, tty) -> list:
        params = [("container", container), ("pod", pod), ("stdin", "true" if stdin else "false"),
                  ("stdout", "true"), ("stderr", "false" if tty else "true"), ("tty", "true" if tty else "false")]
        return [(k, v) for k, v in params if v]

    @group.command("exec", context_settings={"ignore_unknown_options": True})
    @pod_options
    @click.option("-c", "--container", metavar="NAME", help="Which container of the pod.")
    @click.option("-i", "--stdin", is_flag=True, help="Pass stdin to the command.")
    @click.option("-t", "--tty", is_flag=True, help="Run the command on a terminal (with -i: interactive).")
    @click.argument("command", nargs=-1, required=True, type=click.UNPROCESSED)
    def exec_command(name, project, pod, container, stdin, tty, command):
        """Run a command in a running pod: `studio workspace exec NAME [-it] -- COMMAND [ARGS…]`; exits with
        the command's exit code."""
        config, api = session()
        row = workload_named(api, kind, name, project_of(config, project))
        params = [("command", word) for word in command] + terminal_params(pod, container, stdin, tty)
        code = streams.terminal_session(config.url, config.token, f"/api/v1/workloads/{row['id']}/exec", params,
                                        stdin=stdin, tty=tty)
        raise SystemExit(code)

    @group.command("attach")
    @pod_options
    @click.option("-c", "--container", metavar="NAME", help="Which container of the pod.")
    @click.option("-i", "--stdin", is_flag=True, help="Pass stdin to the container.")
    @click.option("-t", "--tty", is_flag=True, help="The container runs on a terminal.")
    def attach_command(name, project, pod, container, stdin, tty):
        """Follow what a running container writes (and, with -i, write to it) until Ctrl-C."""
        config, api = session()
        row = workload_named(api, kind, name, project_of(config, project))
        try:
            streams.terminal_session(config.url, config.token, f"/api/v1/workloads/{row['id']}/attach",
                                     terminal_params(pod, container, stdin, tty), stdin=stdin, tty=tty)
        except KeyboardInterrupt:
            pass

    @group.command("port-forward")
    @pod_options
    @click.option("--port", "ports", required=True, metavar="[LOCAL:]REMOTE",
                  help="The local port and the workload's port (e.g. 8888:8888; LOCAL 0 picks a free one).")
    @click.option("--address", default="127.0.0.1", show_default=True, help="The local address to listen on.")
    def port_forward(name, project, pod, ports, address):
        """Listen on a local port and relay each connection to the workload's port, until Ctrl-C."""
        local, _, remote = ports.rpartition(":")
        if not remote.isdigit() or (local and not local.isdigit()) or not 0 < int(remote) < 65536:
            raise click.BadParameter(f"{ports!r} is not [LOCAL:]REMOTE", param_hint="--port")
        local_port = int(local) if local else int(remote)
        config, api = session()
        row = workload_named(api, kind, name, project_of(config, project))
        params = [("port", remote)] + ([("pod", pod)] if pod else [])
        forward = streams.PortForward(config.url, config.token, f"/api/v1/workloads/{row['id']}/portforward",
                                      params, address, local_port)
        click.echo(f"Forwarding from {forward.address[0]}:{forward.address[1]} -> {remote}")
        try:
            forward.serve()
        except KeyboardInterrupt:
            pass

    return group


def wait_for_pod(api: Api, row: dict, wanted: str | None, timeout: int) -> dict:
    deadline = time.monotonic() + timeout
    while True:
        pods = sorted(api.get(f"/api/v1/workloads/{row['id']}/pods").get("pods", []), key=lambda p: p["name"])
        if wanted:
            pods = [p for p in pods if p["name"] == wanted]
        started = [p for p in pods if p.get("phase") not in (None, "Pending")]
        if started:
            return started[0]
        if time.monotonic() >= deadline:
            if wanted and not pods:
                raise CliError(f"pod {wanted!r} not found in {row['name']!r}", NOT_FOUND)
            raise CliError(f"{row['name']!r} has no started pod yet (phase {row.get('phase')}); try again, or "
                           f"wait longer with --wait-timeout", NOT_FOUND)
        time.sleep(1)


def pods_of(row: dict) -> str:
    wanted = row.get("requestedPods")
    if isinstance(wanted, dict):
        wanted = wanted.get("number", wanted.get("min"))
    return f"{row.get('runningPods') or 0}/{'?' if wanted is None else wanted}"


def gpus_of(row: dict):
    value = row.get("requestedGpus", row.get("allocatedGPU"))
    return "-" if value in (None, 0, 0.0) else f"{float(value):g}"


def age(row: dict) -> str:
    try:
        created = datetime.fromisoformat(str(row["createdAt"]).replace("Z", "+00:00"))
    except (KeyError, ValueError):
        return ""
    seconds = int((datetime.now(timezone.utc) - created).total_seconds())
    for unit, size in (("d", 86400), ("h", 3600), ("m", 60)):
        if seconds >= size:
            return f"{seconds // size}{unit}"
    return f"{max(seconds, 0)}s"


def print_preview(kind: str, project: str, preview: dict) -> None:
    quota, policy = preview.get("quota") or {}, preview.get("policy") or {}
    click.echo(f"Dry run: {kind} {preview.get('name')!r} in project {project!r} (nothing was created)")
    click.echo(f"Quota:    {'allowed' if quota.get('allowed') else 'refused'}: {quota.get('message', '')}")
    forecast = quota.get("forecast")
    if forecast:
        click.echo(f"Forecast: {forecast.get('action')} in node pool {forecast.get('nodePool')}: "
                   f"{forecast.get('message')}")
    violations = policy.get("violations") or []
    click.echo(f"Policy:   {'allowed' if policy.get('allowed') else 'refused'}"
               + "".join(f"\n  {v.get('field')}: {v.get('message')}" for v in violations))
    click.echo("Objects:")
    rows = []
    for item in preview.get("objects", []):
        verdict = item.get("verdict") or {}
        allowed = {True: "allowed", False: "refused", None: "not checked"}[verdict.get("allowed")]
        rows.append([f"{item.get('kind')}/{item.get('name')}", item.get("namespace") or "", allowed,
                     verdict.get("reason") or ""])
    output.columns(rows, ["OBJECT", "NAMESPACE", "CLUSTER", "REASON"], indent="  ")


def print_description(w: dict) -> None:
    spec = w.get("spec") or {}
    output.pairs([("Name", w.get("name")), ("Id", w.get("id")), ("Type", w.get("type")),
                  ("Project", w.get("projectName")), ("Phase", w.get("phase")),
                  ("Message", w.get("phaseMessage") or "-"), ("Submitted by", w.get("submittedBy")),
                  ("Created", w.get("createdAt")), ("Image", spec.get("image")),
                  ("Command", " ".join(x for x in (spec.get("command"), spec.get("args")) if x) or "-")])
    click.echo("Pods:")
    output.columns([[p.get("name"), p.get("phase"), p.get("nodeName") or "", p.get("createdAt")]
                    for p in w.get("pods", [])], ["NAME", "PHASE", "NODE", "CREATED"], indent="  ")


for _kind in KINDS:
    cli.add_command(kind_group(_kind))


def main() -> None:
    cli(prog_name="studio")


if __name__ == "__main__":
    main()
