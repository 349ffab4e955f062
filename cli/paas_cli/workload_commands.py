"""`studio <kind> …`: submit, list, describe, logs, suspend, resume, delete, exec, attach and port-forward, one
group per workload kind."""

from __future__ import annotations

import time
from datetime import datetime, timezone

import click

from paas_cli import output, streams, submit
from paas_cli.client import NOT_FOUND, Api, CliError
from paas_cli.common import (
    KINDS,
    SUSPENDABLE,
    output_option,
    project_named,
    project_of,
    project_option,
    session,
    workload_named,
)


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
