"""A pod's log, read from its cluster for the workloads API (`GET /api/v1/workloads/{id}/pods/{podId}/logs`).

Who may read: whoever may see the workload, as in Run:ai, whose roles grant View, Edit, Create and Delete on a
workload and no separate right to its logs — every role in the workload's project (viewers included, their View
covers the workload's details and logs) and platform admins. A user outside the project does not see the workload:
a 404. A log may print what the workload's outputs mask (a notebook's token): the outputs stay masked, the log is
the project's to read, as on Run:ai.

What the cluster answers is translated here, never passed through as a 500: a pod with no kubelet behind it
(not yet scheduled, or a cluster whose nodes are simulated without a log server), a container that has not
started, a pod already gone, an unreachable cluster — each is a JSON 4xx/503 that says which.
"""

from collections.abc import Iterator

from rest_framework import exceptions, serializers

from studio.clusters import kube
from studio.errors import Conflict, ServiceUnavailable
from studio.iam.permissions import has_project_role
from studio.models import Level

MAX_TAIL_LINES = 100_000
MAX_FOLLOW_SECONDS = 300


class LogQuerySerializer(serializers.Serializer):
    container = serializers.RegexField(r"^[a-z0-9]([-a-z0-9]*[a-z0-9])?$", max_length=63, required=False,
                                       error_messages={"invalid": "Must be a container name (a DNS-1123 label)."})
    tailLines = serializers.IntegerField(min_value=0, max_value=MAX_TAIL_LINES, required=False)
    sinceSeconds = serializers.IntegerField(min_value=1, required=False)
    follow = serializers.BooleanField(required=False, default=False)
    timestamps = serializers.BooleanField(required=False, default=False)  # each line after its RFC 3339 time
    previous = serializers.BooleanField(required=False, default=False)  # the container's instance before a restart

    def to_internal_value(self, data):
        # `tail` and `since` are accepted as the short names kubectl's flags use.
        data = {**{k: v for k, v in data.items()}}
        for short, full in (("tail", "tailLines"), ("since", "sinceSeconds")):
            if short in data and full not in data:
                data[full] = data.pop(short)
        unknown = sorted(set(data) - set(self.fields))
        if unknown:
            raise serializers.ValidationError({name: ["Unknown query parameter."] for name in unknown})
        return super().to_internal_value(data)


def may_read_logs(*, workload, user) -> bool:
    return has_project_role(user, workload.project_id, Level.VIEWER)


def check_may_read_logs(*, workload, user) -> None:
    if not may_read_logs(workload=workload, user=user):
        raise exceptions.NotFound("No such workload.")  # outside the project: as if it were not there


def _cluster_refusal(exc: kube.ClusterError, pod_name: str) -> exceptions.APIException:
    if exc.status == 0:  # refused here before any request: the cluster's address or kubeconfig cannot be used
        return ServiceUnavailable(f"The cluster cannot be reached: {exc.message}")
    if isinstance(exc, kube.NotFound):
        return exceptions.NotFound(f'Pod "{pod_name}" no longer exists on the cluster.')
    if isinstance(exc, kube.TransientClusterError) and exc.status not in (500, 502):
        return ServiceUnavailable(f"The cluster did not answer: {exc.message}")
    if exc.status == 400 and "previous terminated container" in exc.message:  # it never restarted: a state
        return Conflict(f"No log of a previous container: {exc.message}")
    if exc.status == 400:
        # The kubelet's own words: "container x is waiting to start", "a container name must be specified…",
        # "pod p does not have a host assigned".
        return exceptions.ValidationError({"container": [f"No log available: {exc.message}"]}) if (
            "container" in exc.message and "not valid" in exc.message) else Conflict(
            f"No log available yet: {exc.message}")
    # 500/502 from the API server on pods/log: it could not reach the node's kubelet (a real API server with
    # simulated nodes has no kubelet to ask, unless the node side serves logs).
    return Conflict(f"No log available: the node's kubelet did not answer ({exc.message})")


def pod_log(*, workload, pod, query: dict) -> str | Iterator[bytes]:
    """The log as text, or with `follow` an iterator of chunks (the first request already answered)."""
    options = {"container": query.get("container", ""), "tail_lines": query.get("tailLines"),
               "since_seconds": query.get("sinceSeconds"), "timestamps": bool(query.get("timestamps")),
               "previous": bool(query.get("previous"))}
    try:
        conn = kube.connect(workload.cluster)
        if query.get("follow"):
            return kube.pod_log_follow(conn, workload.project.namespace, pod.name, max_seconds=MAX_FOLLOW_SECONDS,
                                       **options)
        return kube.pod_log(conn, workload.project.namespace, pod.name, **options)
    except kube.ClusterError as exc:
        raise _cluster_refusal(exc, pod.name) from exc
    except kube.TRANSIENT_ERRORS as exc:
        raise ServiceUnavailable(f"The cluster did not answer: {exc}") from exc
