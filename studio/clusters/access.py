"""What a cluster registration may carry and point at. Used by the API when a cluster is registered and by
studio/clusters/kube/ each time it builds a client, so a row stored before these rules cannot slip past them.

* A kubeconfig holds inline credentials only: a bearer `token`, `client-certificate-data` +
  `client-key-data`, `certificate-authority-data`. `exec` and `auth-provider` would run a command of the
  server's user; `tokenFile`, `client-certificate`, `client-key` and `certificate-authority` would read the
  server's files. Every other key is refused too (an allow-list), each named in the error.
* The API server and Prometheus URLs (and a kubeconfig's `server`) may reach only the addresses
  studio/addresses.py allows (`check_url`, `AccessRefused`, used from here as `access.check_url`)."""

import yaml

from studio.addresses import AccessRefused, check_url

# Keys of a kubeconfig's `users[].user`, `clusters[].cluster` and `contexts[].context` that may be given.
USER_KEYS = {"token", "client-certificate-data", "client-key-data"}
CLUSTER_KEYS = {"server", "certificate-authority-data", "insecure-skip-tls-verify", "tls-server-name"}
CONTEXT_KEYS = {"cluster", "user", "namespace"}
WHY = {
    "exec": "runs a command on the server",
    "auth-provider": "runs a credential plugin on the server",
    "tokenFile": "reads a file of the server; give `token`",
    "client-certificate": "reads a file of the server; give `client-certificate-data`",
    "client-key": "reads a file of the server; give `client-key-data`",
    "certificate-authority": "reads a file of the server; give `certificate-authority-data`",
}

def parse_kubeconfig(text: str) -> dict:
    """The one reading of a kubeconfig given to this server (the API, the portal, each client built): YAML whose
    every key is text, with `clusters`, holding inline credentials only. AccessRefused names what is wrong."""
    try:
        parsed = yaml.safe_load(text)
    except (yaml.YAMLError, ValueError, OverflowError, RecursionError):  # e.g. `2026-13-45`: a date YAML can't make
        parsed = None
    if not isinstance(parsed, dict) or "clusters" not in parsed:
        raise AccessRefused("kubeconfig", "Not a kubeconfig (YAML with `clusters`).")
    _text_keys(parsed, "kubeconfig")
    check_kubeconfig(parsed)
    return parsed


def _text_keys(node, where: str) -> None:
    """YAML keys may be dates, numbers or null (`2024-01-01: x`); a kubeconfig's are all text."""
    if isinstance(node, dict):
        for key, value in node.items():
            if not isinstance(key, str):
                raise AccessRefused(where, f"Keys must be text; {key!r} is a {type(key).__name__}.")
            _text_keys(value, f"{where}.{key}")
    elif isinstance(node, list):
        for index, item in enumerate(node):
            _text_keys(item, f"{where}[{index}]")


def check_kubeconfig(config: dict) -> None:
    """Refuse a parsed kubeconfig that holds anything but inline credentials, or points at a refused address."""
    for list_key, item_key, allowed in (("users", "user", USER_KEYS), ("clusters", "cluster", CLUSTER_KEYS),
                                        ("contexts", "context", CONTEXT_KEYS)):
        entries = config.get(list_key) or []
        if not isinstance(entries, list):
            raise AccessRefused(f"kubeconfig.{list_key}", "Must be a list.")
        for index, entry in enumerate(entries):
            body = (entry or {}).get(item_key) if isinstance(entry, dict) else None
            where = f"kubeconfig.{list_key}[{index}].{item_key}"
            if body is None:
                continue
            if not isinstance(body, dict):
                raise AccessRefused(where, "Must be a mapping.")
            for key in sorted(body):
                if key not in allowed:
                    reason = WHY.get(key, "is not an inline credential this server accepts")
                    raise AccessRefused(f"{where}.{key}", f"Not accepted: `{key}` {reason}. Allowed: "
                                        f"{', '.join(sorted(allowed))}.")
            if item_key == "cluster" and body.get("server"):
                check_url(f"{where}.server", str(body["server"]))
    for key in sorted(set(config) - {"apiVersion", "kind", "clusters", "users", "contexts", "current-context",
                                     "preferences"}):
        raise AccessRefused(f"kubeconfig.{key}", "Not accepted in a kubeconfig given to this server.")
