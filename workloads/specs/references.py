"""What a spec points at outside itself, for the checks that need the project (workloads.services): the Secrets
its pods would read, and the hosts and paths of its exposed URLs. Pure: plain values in, plain values out."""

from collections.abc import Iterator, Mapping
from urllib.parse import urlsplit


def _items(node, key: str) -> Iterator[tuple[int, dict]]:
    """(index in the spec's list, item) of the items that reach the pods (`exclude: true` ones do not)."""
    for index, item in enumerate(node.get(key) or () if isinstance(node, Mapping) else ()):
        if isinstance(item, Mapping) and not item.get("exclude"):
            yield index, item


def secret_references(spec: Mapping) -> list[tuple[str, str]]:
    """(field, Secret name) of every Secret the spec's pods would read: environment variables (`secret`,
    `userCredential`), secret volumes, git and s3 credentials, image pull secrets, a Kit stream's TLS secret."""
    found: list[tuple[str, str]] = []

    def add(field: str, name) -> None:
        if isinstance(name, str) and name:
            found.append((field, name))

    for i, item in _items(spec, "environmentVariables"):
        for key in ("secret", "userCredential"):
            if isinstance(item.get(key), Mapping):
                add(f"environmentVariables[{i}].{key}.name", item[key].get("name"))
    storage = spec.get("storage") if isinstance(spec.get("storage"), Mapping) else {}
    for i, item in _items(storage, "secretVolume"):
        add(f"storage.secretVolume[{i}].secret", item.get("secret"))
    for i, item in _items(storage, "git"):
        add(f"storage.git[{i}].passwordSecret", item.get("passwordSecret"))
        if isinstance(item.get("secretRef"), Mapping):
            add(f"storage.git[{i}].secretRef.name", item["secretRef"].get("name"))
    for i, item in _items(storage, "s3"):
        add(f"storage.s3[{i}].accessKeySecret", item.get("accessKeySecret"))
    for i, item in _items(spec, "imagePullSecrets"):
        add(f"imagePullSecrets[{i}].name", item.get("name"))
    add("tlsSecret", spec.get("tlsSecret"))
    return found


# --- exposed URLs ---------------------------------------------------------------------------------------------

def project_host(project: str, domain: str) -> str:
    """The host of a project's exposed URLs, `<project>.<domain>`; empty when no domain is configured."""
    return f"{project}.{domain}" if domain else ""


def exposed_url_errors(spec: Mapping, *, project: str, domain: str, own_hosts: frozenset[str]) -> dict[str, str]:
    """{"exposedUrls[i].url": why} for each URL whose host is not the project's own: hosts come from the configured
    domain, one subdomain per project (`<project>.<domain>` and names under it); PaaS Studio's own host is never
    one. Without a domain, an exposed URL takes no `url` (it is `/<project>/<workload>/<port>`, on any host)."""
    errors = {}
    mine = project_host(project, domain)
    for i, item in _items(spec, "exposedUrls"):
        url = item.get("url")
        if not isinstance(url, str) or not url:
            continue
        where = f"exposedUrls[{i}].url"
        if not domain:
            errors[where] = ("No domain is configured for exposed URLs (EXPOSED_URL_DOMAIN): leave url out, and the "
                             "URL is /<project>/<workload>/<port>.")
            continue
        host = _host(url)
        if host is None:
            errors[where] = f"Must be a path (/lab) or an http(s) URL with a host and path only (https://{mine}/lab)."
        elif host and host != mine and not host.endswith(f".{mine}"):
            errors[where] = (f"Must be on {mine} or a name under it: project {project}'s own subdomain of {domain}; "
                             "other hosts belong to other projects or to no one.")
        elif (host or mine) in own_hosts:
            errors[where] = f"{host or mine} is PaaS Studio's own host."
    return errors


def _host(url: str) -> str | None:
    """The lowercased host of an exposed URL ("" for a path); None for anything else."""
    if url.startswith("/") and not url.startswith("//"):
        return "" if "?" not in url and "#" not in url else None
    try:
        parts = urlsplit(url)
        port = parts.port
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname or port is not None or parts.username \
            or parts.password or parts.query or parts.fragment or "*" in parts.hostname:
        return None
    return parts.hostname.lower().rstrip(".")
