"""The floor of a watcher's first pass: reading the cluster it follows, and nothing else. Every Job and every pod
LISTed through the official `kubernetes` client in pages of 500 (as the watcher's reflectors page), the two kinds
in two threads of one process (as its reflectors), each page's JSON decoded by the standard library (what the
client does before it builds its models; the models themselves would cost many times more). No trimming, no
store, no database: whatever a Python watcher of the cluster does on top of this, it cannot take less. And the
wire alone: the same pages read and not decoded (the continue token found in the list's metadata, which the API
server writes before the items), what no client of this server can go under."""

import json
import re
import resource
import threading
import time

import kubernetes

PAGE = 500
CONTINUE = re.compile(rb'"continue":"([^"]*)"')


def _cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def raw_lists(url: str, token: str, *, decode: bool = True, page: int = PAGE) -> dict:
    """Wall seconds to LIST every Job and pod, the client's CPU seconds, the pages read, and how many objects came
    (decoded) or bytes (not)."""
    configuration = kubernetes.client.Configuration()
    configuration.host = url
    configuration.api_key = {"authorization": f"Bearer {token}"}
    client = kubernetes.client.ApiClient(configuration)
    lists = {"jobs": kubernetes.client.BatchV1Api(client).list_job_for_all_namespaces,
             "pods": kubernetes.client.CoreV1Api(client).list_pod_for_all_namespaces}
    counted: dict[str, int] = {}
    pages: dict[str, int] = {}
    failed: list[BaseException] = []

    def read(kind: str) -> None:
        try:
            count, more = 0, None
            pages[kind] = 0
            while True:
                pages[kind] += 1
                kwargs = {"limit": page, "_preload_content": False}
                if more:
                    kwargs["_continue"] = more
                data = lists[kind](**kwargs).data
                if decode:
                    listed = json.loads(data)
                    count += len(listed["items"])
                    more = listed["metadata"].get("continue")
                else:
                    count += len(data)
                    found = CONTINUE.search(data, 0, data.find(b'"items"'))
                    more = found and found.group(1).decode()
                if not more:
                    break
            counted[kind] = count
        except BaseException as exc:  # noqa: BLE001 - raised again in the caller's thread
            failed.append(exc)

    cpu, wall = _cpu_seconds(), time.monotonic()
    threads = [threading.Thread(target=read, args=(kind,)) for kind in lists]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    wall, cpu = time.monotonic() - wall, _cpu_seconds() - cpu
    client.close()
    if failed:
        raise failed[0]
    return {"seconds": wall, "cpu_seconds": cpu, "count": sum(counted.values()), "pages": sum(pages.values())}
