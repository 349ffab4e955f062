"""The kubelet's side of a pod: image pull, container start, completion, crash loop, graceful stop, and the pod
status and Events a real kubelet reports at each step.

Timing: a bound pod shows ContainerCreating for `pull_seconds`, then runs. Pods of a Job (or any pod with
restartPolicy other than Always and the `kubesim.paas-studio/run-seconds` annotation) succeed after
`run_seconds`; the rest run until deleted. An image whose reference contains `does-not-exist` (or is listed in the
pull-failure fault) cycles through ErrImagePull / ImagePullBackOff; one containing `crashloop` (or listed in the
crash fault) exits 1 shortly after each start: CrashLoopBackOff with a growing restartCount, or phase Failed
under restartPolicy Never.
"""

import hashlib
import time

from ..errors import Unavailable, bad_request
from ..store import now_rfc3339, parse_rfc3339
from .podgrouper import SCHEDULER_NAME

RUN_SECONDS_ANNOTATION = "kubesim.paas-studio/run-seconds"
TERMINAL = ("succeeded", "failed")
RETRY_SECONDS = 0.5  # a bind whose write the server did not take is sent again this much later


class PodState:
    def __init__(self, node: str, ip: str, host_ip: str, now: float):
        self.node, self.ip, self.host_ip = node, ip, host_ip
        self.stage, self.since, self.bound_at = "creating", now, now
        self.started_at = self.finished_at = self.removing = None
        self.restarts, self.pull_backoffs = 0, 0
        self.last_term = None
        self.conditions = {}  # type -> (status, lastTransitionTime)
        self.written = None   # (stage, since, restarts, resourceVersion) of the last status written


def full_image(image: str) -> str:
    """`busybox` -> `docker.io/library/busybox:latest`, as containerd names it in its messages."""
    first = image.split("/", 1)[0]
    if "/" not in image or not ("." in first or ":" in first or first == "localhost"):
        image = "docker.io/" + ("library/" if "/" not in image else "") + image
    tail = image.rsplit("/", 1)[-1]
    return image if ":" in tail or "@" in image else image + ":latest"


def _digest(*parts: str) -> str:
    return hashlib.sha256("/".join(parts).encode()).hexdigest()


class Kubelet:
    def __init__(self, controller):
        self.ctl, self.sim, self.store = controller, controller.sim, controller.store
        self.states = {}      # pod uid -> PodState
        self._next_ip = {}    # node name -> last host octet handed out

    # --- scheduling outcomes ---------------------------------------------------------------------------------

    def bind(self, pod: dict, placement) -> None:
        node_name, _devices = placement
        index = int(node_name.rsplit("-", 1)[-1])
        octet = self._next_ip.get(node_name, 1) % 253 + 1
        self._next_ip[node_name] = octet
        now = time.time()
        st = self.states[pod["metadata"]["uid"]] = PodState(node_name, f"10.244.{index}.{octet + 1}",
                                                            f"172.18.0.{index + 2}", now)
        pod = {**pod, "spec": {**pod["spec"], "nodeName": node_name}}
        meta = pod["metadata"]
        if pod["spec"].get("schedulerName") == SCHEDULER_NAME and self.ctl.kai is not None:
            self.ctl.recorder.emit(pod, "Normal", "Scheduled", f"Successfully assigned pod {meta['namespace']}/"
                                   f"{meta['name']} to node {node_name} at node-pool default", SCHEDULER_NAME)
        else:
            self.ctl.recorder.emit(pod, "Normal", "Scheduled", f"Successfully assigned {meta['namespace']}/"
                                                               f"{meta['name']} to {node_name}", "default-scheduler")
        self._pulling(pod, st)
        try:
            self.store.update("pods", {**pod, "metadata": dict(meta), "status": self._status(pod, st)})
        except Unavailable:  # the binding or the first status did not reach the server: the next sync sends both
            self.ctl.after(RETRY_SECONDS, "pods", meta["namespace"], meta["name"])
            return
        self.ctl.after(self.sim.pull_seconds, "pods", meta["namespace"], meta["name"])

    def unschedulable(self, pod: dict, message: str) -> None:
        status = {**(pod.get("status") or {}), "phase": "Pending",
                  "conditions": [{"type": "PodScheduled", "status": "False", "lastProbeTime": None,
                                  "lastTransitionTime": _condition_time(pod, "PodScheduled", "False"),
                                  "reason": "Unschedulable", "message": message}]}
        if status != pod.get("status"):
            try:
                self.store.update("pods", {**pod, "metadata": dict(pod["metadata"]), "status": status})
            except Unavailable:  # said again on the scheduler's next pass
                self.ctl.scheduler.reported.pop(pod["metadata"]["uid"], None)
                return
            self.ctl.recorder.emit(pod, "Warning", "FailedScheduling", message, "default-scheduler")

    # --- lifecycle -------------------------------------------------------------------------------------------

    def sync(self, pod: dict) -> None:
        meta = pod["metadata"]
        st = self.states.get(meta["uid"])
        if meta.get("deletionTimestamp"):
            return self._terminate(pod, st)
        if st is None:
            # The scheduler sees a new pod only after `schedule_seconds`, so it is observably Pending first.
            waited = time.time() - parse_rfc3339(meta["creationTimestamp"])
            if waited < self.sim.schedule_seconds:
                self.ctl.after(self.sim.schedule_seconds - waited, "pods", meta["namespace"], meta["name"])
                return
            if self.ctl.kai is not None and pod["spec"].get("schedulerName") == SCHEDULER_NAME:
                self.ctl.kai.enqueue(pod)  # KAI's queues decide (node/kai.py)
            else:
                self.ctl.scheduler.enqueue(pod)
            return
        now = time.time()
        due = self._advance(pod, st, now)
        self._write(pod, st)
        if due is not None:
            self.ctl.after(max(0.0, due - now), "pods", meta["namespace"], meta["name"])

    def forget(self, pod: dict) -> None:
        self.states.pop(pod["metadata"]["uid"], None)
        self.ctl.scheduler.forget(pod["metadata"]["uid"])
        if self.ctl.kai is not None:
            self.ctl.kai.forget(pod["metadata"]["uid"])

    def _terminate(self, pod, st) -> None:
        meta = pod["metadata"]
        if st is None or st.stage in TERMINAL:
            self.store.remove("pods", meta["namespace"], meta["name"])
            return
        now = time.time()
        if st.removing is None:
            st.removing = now + 2 * self.sim.tick  # containers stop quickly; the grace period is not waited out
            for c in pod["spec"]["containers"]:
                self._event(pod, st, "Normal", "Killing", f"Stopping container {c['name']}", c["name"])
            self.ctl.after(st.removing - now, "pods", meta["namespace"], meta["name"])
        elif now >= st.removing:
            self.store.remove("pods", meta["namespace"], meta["name"])
        else:
            self.ctl.after(st.removing - now, "pods", meta["namespace"], meta["name"])

    def _advance(self, pod: dict, st: PodState, now: float) -> float | None:
        sim, containers = self.sim, pod["spec"]["containers"]
        while True:
            if st.stage == "creating":
                due = st.since + sim.pull_seconds
                if now < due:
                    return due
                failing = [c for c in containers if sim.pull_fails(c["image"])]
                st.since = due
                if failing:
                    st.stage = "pull_error"
                    for c in failing:
                        self._event(pod, st, "Warning", "Failed", f'Failed to pull image "{c["image"]}": '
                                                                  f'{_pull_error(c["image"])}', c["name"])
                        self._event(pod, st, "Warning", "Failed", "Error: ErrImagePull", c["name"])
                    continue
                for c in containers:
                    ms = int(sim.pull_seconds * 1000)
                    self._event(pod, st, "Normal", "Pulled", f'Successfully pulled image "{c["image"]}" in {ms}ms '
                                                             f"({ms}ms including waiting). Image size: 4194304 bytes.",
                                c["name"])
                self._start(pod, st, due)
            elif st.stage == "pull_error":
                due = st.since + sim.pull_seconds
                if now < due:
                    return due
                st.stage, st.since = "pull_backoff", due
                st.pull_backoffs += 1
                for c in containers:
                    if sim.pull_fails(c["image"]):
                        self._event(pod, st, "Normal", "BackOff", f'Back-off pulling image "{c["image"]}"', c["name"])
                        self._event(pod, st, "Warning", "Failed", "Error: ImagePullBackOff", c["name"])
            elif st.stage == "pull_backoff":
                due = st.since + self._backoff(st.pull_backoffs)
                if now < due:
                    return due
                st.stage, st.since = "creating", due
                self._pulling(pod, st)
            elif st.stage == "running":
                if any(sim.crashes(c["image"]) for c in containers):
                    due = st.started_at + self._crash_after()
                    if now < due:
                        return due
                    st.last_term = {"exitCode": 1, "reason": "Error", "startedAt": now_rfc3339(st.started_at),
                                    "finishedAt": now_rfc3339(due)}
                    if pod["spec"].get("restartPolicy") == "Never":
                        return self._finish(pod, st, "failed", due)
                    st.restarts += 1
                    st.stage, st.since = "crash_backoff", due
                    for c in containers:
                        if sim.crashes(c["image"]):
                            self._event(pod, st, "Warning", "BackOff", f"Back-off restarting failed container "
                                        f"{c['name']} in pod {_pod_ref(pod)}", c["name"])
                    continue
                run = self._run_seconds(pod)
                if run is None:
                    return None
                due = st.started_at + run
                if now < due:
                    return due
                return self._finish(pod, st, "succeeded", due)
            elif st.stage == "crash_backoff":
                due = st.since + self._backoff(st.restarts)
                if now < due:
                    return due
                for c in containers:
                    if sim.crashes(c["image"]):
                        self._event(pod, st, "Normal", "Pulled", f'Container image "{c["image"]}" already present '
                                                                 "on machine", c["name"])
                self._start(pod, st, due, only_crashing=True)
            else:
                return None

    def _pulling(self, pod, st):
        for c in pod["spec"]["containers"]:
            self._event(pod, st, "Normal", "Pulling", f'Pulling image "{c["image"]}"', c["name"])

    def _start(self, pod, st, at: float, only_crashing: bool = False):
        st.stage, st.since, st.started_at = "running", at, at
        for c in pod["spec"]["containers"]:
            if only_crashing and not self.sim.crashes(c["image"]):
                continue
            self._event(pod, st, "Normal", "Created", f"Created container: {c['name']}", c["name"])
            self._event(pod, st, "Normal", "Started", f"Started container {c['name']}", c["name"])

    def _finish(self, pod, st, stage: str, at: float) -> None:
        st.stage, st.since, st.finished_at = stage, at, at
        self.ctl.scheduler.release(pod["metadata"]["uid"])  # a finished pod no longer holds node resources
        return None

    def _run_seconds(self, pod) -> float | None:
        meta = pod["metadata"]
        annotated = (meta.get("annotations") or {}).get(RUN_SECONDS_ANNOTATION)
        # A batch Job's pods, and a Kubeflow job's (PyTorchJob, TFJob, …): they run to completion.
        owned_by_job = any(str(r.get("kind") or "").endswith("Job") for r in meta.get("ownerReferences") or [])
        if annotated is not None and (owned_by_job or pod["spec"].get("restartPolicy") != "Always"):
            try:
                return max(0.0, float(annotated))
            except ValueError:
                pass
        return self.sim.run_seconds if owned_by_job else None

    def _crash_after(self) -> float:
        return max(2 * self.sim.tick, self.sim.pull_seconds)

    def _backoff(self, attempt: int) -> float:
        # The kubelet backs off 10s, 20s, 40s ... 300s; here the same doubling, scaled to the sim's pace.
        base = max(2 * self.sim.tick, self.sim.pull_seconds)
        return base * min(2 ** max(0, attempt - 1), 30)

    def _event(self, pod, st, type_, reason, message, container):
        self.ctl.recorder.emit(pod, type_, reason, message, "kubelet", st.node, f"spec.containers{{{container}}}")

    # --- status ----------------------------------------------------------------------------------------------

    def _write(self, pod: dict, st: PodState) -> None:
        # The status is a function of the pod state; rebuild it only when that moved (most syncs are echoes).
        signature = (st.stage, st.since, st.restarts, pod["metadata"]["resourceVersion"])
        if signature == st.written:
            return
        status = self._status(pod, st)
        if status != pod.get("status") or not pod["spec"].get("nodeName"):
            # With the node it was bound to: where the binding's answer was lost, the write binds it again.
            pod = self.store.update("pods", {**pod, "metadata": dict(pod["metadata"]), "status": status,
                                             "spec": {**pod["spec"], "nodeName": st.node}})
        st.written = (st.stage, st.since, st.restarts, pod["metadata"]["resourceVersion"])

    def _condition(self, st, type_, ok, reason=None, message=None) -> dict:
        status = "True" if ok else "False"
        if st.conditions.get(type_, ("",))[0] != status:
            st.conditions[type_] = (status, now_rfc3339())
        cond = {"type": type_, "status": status, "lastProbeTime": None, "lastTransitionTime": st.conditions[type_][1]}
        if reason:
            cond["reason"] = reason
        if message:
            cond["message"] = message
        return cond

    def _status(self, pod: dict, st: PodState) -> dict:
        containers = pod["spec"]["containers"]
        statuses = [self._container_status(pod, st, c) for c in containers]
        phase = {"running": "Running", "crash_backoff": "Running", "succeeded": "Succeeded",
                 "failed": "Failed"}.get(st.stage, "Pending")
        unready = [s["name"] for s in statuses if not s["ready"]]
        if st.stage in TERMINAL:
            ready = [self._condition(st, t, False, "PodCompleted") for t in ("Ready", "ContainersReady")]
        else:
            message = f"containers with unready status: [{' '.join(unready)}]" if unready else None
            ready = [self._condition(st, t, not unready, "ContainersNotReady" if unready else None, message)
                     for t in ("Ready", "ContainersReady")]
        conditions = [self._condition(st, "PodReadyToStartContainers", st.stage not in TERMINAL),
                      self._condition(st, "Initialized", True), *ready, self._condition(st, "PodScheduled", True)]
        status = {"phase": phase, "conditions": conditions, "hostIP": st.host_ip, "hostIPs": [{"ip": st.host_ip}],
                  "podIP": st.ip, "podIPs": [{"ip": st.ip}], "startTime": now_rfc3339(st.bound_at),
                  "containerStatuses": statuses, "qosClass": (pod.get("status") or {}).get("qosClass", "BestEffort")}
        return status

    def _container_status(self, pod, st, c) -> dict:
        name, image, sim = c["name"], c["image"], self.sim
        crashing = sim.crashes(image)
        out = {"name": name, "image": image, "imageID": "", "ready": False, "started": False,
               "restartCount": st.restarts if crashing else 0}
        if st.started_at is not None:
            out["imageID"] = f"{full_image(image).rsplit(':', 1)[0]}@sha256:{_digest(image)}"
            out["containerID"] = f"containerd://{_digest(pod['metadata']['uid'], name, str(st.restarts))}"
        if crashing and st.last_term:
            out["lastState"] = {"terminated": {**st.last_term, "containerID": out.get("containerID", "")}}
        else:
            out["lastState"] = {}
        if st.stage == "creating" or (st.stage in ("pull_error", "pull_backoff") and not sim.pull_fails(image)):
            out["state"] = {"waiting": {"reason": "ContainerCreating"}}
        elif st.stage == "pull_error":
            out["state"] = {"waiting": {"reason": "ErrImagePull", "message": _pull_error(image)}}
        elif st.stage == "pull_backoff":
            out["state"] = {"waiting": {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{image}": '
                                                                                 f"ErrImagePull: {_pull_error(image)}"}}
        elif st.stage == "crash_backoff" and crashing:
            seconds = min(10 * 2 ** (st.restarts - 1), 300)  # the kubelet's wording, in its own (real) seconds
            out["state"] = {"waiting": {"reason": "CrashLoopBackOff", "message": f"back-off {seconds}s restarting "
                                        f"failed container={name} pod={_pod_ref(pod)}"}}
        elif st.stage in ("running", "crash_backoff"):
            out.update(ready=True, started=True)
            out["state"] = {"running": {"startedAt": now_rfc3339(st.started_at)}}
        else:
            failed = st.stage == "failed" and crashing
            out["state"] = {"terminated": {"exitCode": 1 if failed else 0, "reason": "Error" if failed else "Completed",
                                           "startedAt": now_rfc3339(st.started_at),
                                           "finishedAt": now_rfc3339(st.finished_at),
                                           "containerID": out.get("containerID", "")}}
            if failed:
                out["lastState"] = {}
        return out

    # --- logs ------------------------------------------------------------------------------------------------

    def logs(self, pod: dict, query: dict) -> str:
        meta, names = pod["metadata"], [c["name"] for c in pod["spec"]["containers"]]
        name = query.get("container") or (names[0] if len(names) == 1 else None)
        if name is None:
            raise bad_request(f"a container name must be specified for pod {meta['name']}, choose one of: "
                              f"[{' '.join(names)}]")
        if name not in names:
            raise bad_request(f"container {name} is not valid for pod {meta['name']}")
        st = self.states.get(meta["uid"])
        if st is None or st.started_at is None:
            waiting = next((s["state"].get("waiting", {}).get("reason") for s in
                            (pod.get("status") or {}).get("containerStatuses") or [] if s["name"] == name), None)
            raise bad_request(f'container "{name}" in pod "{meta["name"]}" is waiting to start: '
                              f"{waiting or 'ContainerCreating'}")
        image = next(c["image"] for c in pod["spec"]["containers"] if c["name"] == name)
        end = st.finished_at or time.time()
        seconds = int(max(0.0, end - st.started_at))
        lines = [f"kubesim: container {name} started from image {image}"]
        lines += [f"kubesim: {name} working, step {i + 1}" for i in range(min(seconds, 1000))]
        if st.stage == "succeeded":
            lines.append(f"kubesim: {name} finished")
        if self.sim.crashes(image):
            lines.append(f"kubesim: {name} crashed: exit status 1")
        tail = query.get("tailLines")
        if tail and tail.isdigit():
            lines = lines[-int(tail):] if int(tail) else []
        return "".join(line + "\n" for line in lines)


def _pod_ref(pod) -> str:
    meta = pod["metadata"]
    return f"{meta['name']}_{meta['namespace']}({meta['uid']})"


def _pull_error(image: str) -> str:
    full = full_image(image)
    return (f'rpc error: code = NotFound desc = failed to pull and unpack image "{full}": failed to resolve '
            f'reference "{full}": {full}: not found')


def _condition_time(pod: dict, type_: str, status: str) -> str:
    for cond in (pod.get("status") or {}).get("conditions") or []:
        if cond["type"] == type_ and cond["status"] == status:
            return cond["lastTransitionTime"]
    return now_rfc3339()
