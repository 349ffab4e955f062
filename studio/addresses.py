"""Which addresses the server may reach when it calls out to a URL it was given (a cluster's API server and
Prometheus, a kubeconfig's `server`, an identity provider's discovery document): never link-local or cloud
metadata addresses; loopback, private and other special-purpose addresses only where CLUSTER_ALLOWED_NETWORKS
lists them. A host name is resolved and every address it has is checked. studio/outbound.py applies these
rules at each use of a URL and to each connection's address."""

import ipaddress
import socket
from urllib.parse import urlsplit

from django.conf import settings

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
