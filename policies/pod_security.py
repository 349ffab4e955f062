"""The Pod Security Admission level of a project's namespace, from its effective policies. Pure.

A namespace holds workloads of every type, so its level is what the loosest of its three effective policies
(training, workspace, inference) lets through:

* `privileged` when some policy allows what "baseline" forbids: host network or IPC, a hostPath volume,
  a capability outside baseline's list (or any capability, with no `options`), an Unconfined seccomp profile;
* `restricted` when every policy forces what "restricted" needs: no privilege escalation, non-root, a
  RuntimeDefault/Localhost seccomp profile, no added capability beyond NET_BIND_SERVICE, and no volume
  restricted refuses or root init container (hostPath, nfs, git). A non-root container's manifest
  (workloads.manifests.parts.security) then has no privilege escalation and drops ALL capabilities;
* `baseline` otherwise — the secure default's level.
"""

from __future__ import annotations

from policies.fallback import BASELINE_CAPABILITIES, SAFE_SECCOMP
from policies.merge import Effective, get_path

PRIVILEGED, BASELINE, RESTRICTED = "privileged", "baseline", "restricted"
LABEL_PREFIX = "pod-security.kubernetes.io/"
VERSION = "latest"


def _fixed(policy: Effective, path: str):
    """The only value a field can take (None when the submitter may choose)."""
    rule = policy.rules.get(path, {})
    default = get_path(policy.defaults, path)
    if rule.get("canEdit") is False:
        return default if default is not None else "absent"
    options = rule.get("options")
    if options is not None and len(options) == 1 and rule.get("required"):
        return options[0]["value"]
    return None


def _may_be_true(policy: Effective, path: str) -> bool:
    fixed = _fixed(policy, path)
    return fixed is None or fixed is True


def _may_add(policy: Effective, field: str) -> bool:
    instances = (get_path(policy.defaults, field) or {}).get("instances") or []
    return bool(instances) or policy.rules.get(f"{field}.instances", {}).get("canAdd", True) is not False


def _capabilities(policy: Effective) -> set[str] | None:
    """The capabilities a workload may add; None for any."""
    fixed = _fixed(policy, "security.capabilities")
    if fixed is not None:
        return set(fixed) if isinstance(fixed, list) else set()
    options = policy.rules.get("security.capabilities", {}).get("options")
    return None if options is None else {option["value"] for option in options}


def _seccomp(policy: Effective) -> set[str] | None:
    options = policy.rules.get("security.seccompProfileType", {}).get("options")
    return None if options is None else {option["value"] for option in options}


def allows_privileged(policy: Effective, policy_type: str) -> bool:
    capabilities, seccomp = _capabilities(policy), _seccomp(policy)
    if capabilities is None or capabilities - set(BASELINE_CAPABILITIES):
        return True
    if seccomp is None or "Unconfined" in seccomp:
        return True
    if _may_add(policy, "storage.hostPath"):
        return True
    if policy_type == "inferences":  # no host namespaces in an inference's spec
        return False
    return _may_be_true(policy, "security.hostNetwork") or _may_be_true(policy, "security.hostIpc")


def forces_restricted(policy: Effective, policy_type: str) -> bool:
    capabilities, seccomp_default = _capabilities(policy), get_path(policy.defaults, "security.seccompProfileType")
    seccomp_forced = _fixed(policy, "security.seccompProfileType") in SAFE_SECCOMP or (
        seccomp_default in SAFE_SECCOMP and (_seccomp(policy) or {"x"}) <= set(SAFE_SECCOMP))
    checks = [
        _fixed(policy, "security.runAsNonRoot") is True,
        seccomp_forced,
        capabilities is not None and capabilities <= {"NET_BIND_SERVICE"},
        not _may_add(policy, "storage.git"),
        not _may_add(policy, "storage.hostPath"),
        not _may_add(policy, "storage.nfs"),
    ]
    if policy_type != "inferences":  # no such field in an inference's spec; non-root implies no escalation there
        checks.append(_fixed(policy, "security.allowPrivilegeEscalation") in (False, "absent"))
    return all(checks)


def level(policies: dict[str, Effective]) -> str:
    """The namespace's level from the effective policy of each type (`{"trainings": …, …}`)."""
    if any(allows_privileged(policy, policy_type) for policy_type, policy in policies.items()):
        return PRIVILEGED
    if all(forces_restricted(policy, policy_type) for policy_type, policy in policies.items()):
        return RESTRICTED
    return BASELINE


def namespace_labels(value: str) -> dict[str, str]:
    """enforce, warn and audit at `value`, each with its `-version`."""
    labels = {}
    for mode in ("enforce", "warn", "audit"):
        labels[f"{LABEL_PREFIX}{mode}"] = value
        labels[f"{LABEL_PREFIX}{mode}-version"] = VERSION
    return labels
