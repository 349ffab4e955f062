"""A submit's flags as the body of Run:ai's create request (`POST /api/v1/workloads/<kind>`), pure."""

from __future__ import annotations

import shlex

import click


def environment(values: tuple[str, ...]) -> list[dict]:
    variables = []
    for item in values:
        name, equals, value = item.partition("=")
        if not equals or not name:
            raise click.BadParameter(f"{item!r} is not KEY=VALUE", param_hint="'-e' / '--environment'")
        variables.append({"name": name, "value": value})
    return variables


def existing_pvcs(values: tuple[str, ...]) -> list[dict]:
    """`claimname=NAME,path=/PATH[,readonly]` (Run:ai's --existing-pvc) as the spec's storage.pvc entries."""
    claims = []
    for item in values:
        fields, readonly = {}, False
        for part in item.split(","):
            key, equals, value = part.partition("=")
            key = key.strip().lower()
            if key == "readonly" and (not equals or value.lower() in ("true", "yes", "1")):
                readonly = True
            elif equals and key in ("claimname", "path"):
                fields[key] = value.strip()
            else:
                raise click.BadParameter(f"{part!r} in {item!r}: expected claimname=NAME,path=/PATH[,readonly]",
                                         param_hint="'--existing-pvc'")
        if set(fields) != {"claimname", "path"}:
            raise click.BadParameter(f"{item!r} needs both claimname= and path=", param_hint="'--existing-pvc'")
        claims.append({"existingPvc": True, "claimName": fields["claimname"], "path": fields["path"],
                       "readOnly": readonly})
    return claims


def compute(*, gpus, portion, gpu_memory, cpu, memory) -> dict:
    body = {}
    if portion is not None:
        body.update(gpuDevicesRequest=gpus if gpus is not None else 1, gpuRequestType="portion",
                    gpuPortionRequest=portion)
    elif gpu_memory is not None:
        body.update(gpuDevicesRequest=gpus if gpus is not None else 1, gpuRequestType="memory",
                    gpuMemoryRequest=gpu_memory)
    elif gpus is not None:
        body["gpuDevicesRequest"] = gpus
    if cpu is not None:
        body["cpuCoreRequest"] = cpu
    if memory is not None:
        body["cpuMemoryRequest"] = memory
    return body


def spec(*, image, command_flag, args, env, node_pools, pvcs, compute_body, extra) -> dict:
    """With --command the first word after `--` is the container's command and the rest its arguments; without
    it, everything after `--` is arguments to the image's own entry point (Run:ai's CLI reads them so)."""
    body = {"image": image}
    words = list(args)
    if command_flag:
        if not words:
            raise click.BadParameter("--command needs the command after `--`", param_hint="'--command'")
        body["command"] = words.pop(0)
    if words:
        body["args"] = shlex.join(words)
    if env:
        body["environmentVariables"] = env
    pools = [p.strip() for item in node_pools for p in item.split(",") if p.strip()]
    if pools:
        body["nodePools"] = pools
    if pvcs:
        body["storage"] = {"pvc": pvcs}
    if compute_body:
        body["compute"] = compute_body
    body.update({k: v for k, v in extra.items() if v is not None})
    return body
