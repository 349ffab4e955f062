"""What a cluster registration may carry and point at. Used by the API when a cluster is registered and by
studio/clusters/kube/ each time it builds a client, so a row stored before these rules cannot slip past them.

* A kubeconfig holds inline credentials only: a bearer `token`, `client-certificate-data` +
  `client-key-data`, `certificate-authority-data`. `exec` and `auth-provider` would run a command of the
  server's user; `tokenFile`, `client-certificate`, `client-key` and `certificate-authority` would read the
  server's files. Every other key is refused too (an allow-list), each named in the error.
* The API server and Prometheus URLs (and a kubeconfig's `server`) may not reach link-local or cloud metadata
  addresses, ever; loopback, private and other special-purpose addresses only where
  CLUSTER_ALLOWED_NETWORKS lists them. A host name is resolved and every address it has is checked."""

import ipaddress
import socket
from urllib.parse import urlsplit

import yaml
from django.conf import settings

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

# Never reachable, whatever the allow-list says: link-local (the 169.254.169.254 metadata service of AWS,
# GCP and Azure lives there), the metadata addresses outside it, and addresses that are not a host.
ALWAYS_REFUSED = [ipaddress.ip_network(n) for n in (
    "169.254.0.0/16", "fe80::/10", "fd00:ec2::254/128", "100.100.100.200/32", "0.0.0.0/8", "::/128",
    "224.0.0.0/4", "ff00::/8", "255.255.255.255/32",
)]


class AccessRefused(ValueError):
    """A registration the rules refuse; `field` names where (`kubeconfig.users[0].user.exec`)."""

    def __init__(self, field: str, message: str):
        super().__init__(f"{field}: {message}")
        self.field, self.message = field, message


def allowed_networks() -> list:
    return [ipaddress.ip_network(n.strip(), strict=False) for n in settings.CLUSTER_ALLOWED_NETWORKS if n.strip()]


def address_problem(address: str) -> str | None:
    """Why a cluster may not be reached at this IP address, or None."""
    ip = ipaddress.ip_address(address)
    if getattr(ip, "ipv4_mapped", None):
        ip = ip.ipv4_mapped
    if any(ip.version == net.version and ip in net for net in ALWAYS_REFUSED):
        return f"{ip} is a link-local, metadata or non-host address, which is never allowed"
    if ip.is_global:
        return None
    if any(ip.version == net.version and ip in net for net in allowed_networks()):
        return None
    return (f"{ip} is a loopback, private or reserved address; list its network in CLUSTER_ALLOWED_NETWORKS "
            "to allow it")


def check_url(field: str, url: str, *, resolve: bool = True) -> None:
    """Refuse a URL whose host is (or resolves to) an address that may not be reached. A name that does not
    resolve now is let through: it is checked again when a client is built."""
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise AccessRefused(field, "Must be an http or https URL with a host.")
    host = parts.hostname
    try:
        addresses = [str(ipaddress.ip_address(host))]
    except ValueError:
        if not resolve:
            return
        try:
            addresses = sorted({info[4][0] for info in socket.getaddrinfo(host, parts.port or 443)})
        except (OSError, UnicodeError):
            return
    for address in addresses:
        problem = address_problem(address.split("%", 1)[0])
        if problem:
            raise AccessRefused(field, f"{host} may not be used: {problem}.")


def parse_kubeconfig(text: str) -> dict:
    """The one reading of a kubeconfig given to this server (the API, the portal, each client built): YAML whose
    every key is text, with `clusters`, holding inline credentials only. AccessRefused names what is wrong."""
    try:
        parsed = yaml.safe_load(text)
    except yaml.YAMLError:
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
