"""Kubernetes' name rules: DNS subdomains, label values, qualified names (label, annotation and resource keys).
Pure predicates, used by every app that checks what will become an object's metadata."""

import re

_DNS_SUBDOMAIN_RE = re.compile(r"[a-z0-9](?:[-a-z0-9]*[a-z0-9])?(?:\.[a-z0-9](?:[-a-z0-9]*[a-z0-9])?)*")
_LABEL_VALUE_RE = re.compile(r"(?:[A-Za-z0-9](?:[-A-Za-z0-9_.]*[A-Za-z0-9])?)?")


def is_dns_subdomain(text: str) -> bool:
    return len(text) <= 253 and _DNS_SUBDOMAIN_RE.fullmatch(text) is not None


def is_label_value(text: str) -> bool:
    return len(text) <= 63 and _LABEL_VALUE_RE.fullmatch(text) is not None


def is_qualified_name(text: str) -> bool:
    """Label, annotation and resource keys: an optional DNS subdomain prefix and '/', then a 1-63 char name."""
    prefix, slash, name = text.rpartition("/")
    if slash and not is_dns_subdomain(prefix):
        return False
    return name != "" and is_label_value(name)
