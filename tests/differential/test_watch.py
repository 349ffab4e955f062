"""Watches: BOOKMARK events for clients that allow them, and a resourceVersion the server has not reached."""

import json
import threading
import time


def watch_lines(apiserver, path: str, params: dict) -> list[tuple[float, dict]]:
    """Every event of a watch until the server ends it, with the seconds since it started."""
    started = time.monotonic()
    response = apiserver.request("GET", path, params={"watch": "1", **params}, stream=True, timeout=30)
    assert response.status_code == 200, response.text
    lines = [(time.monotonic() - started, json.loads(line)) for line in response.iter_lines() if line.strip()]
    return lines + [(time.monotonic() - started, {"type": "END"})]


def test_a_watch_that_allows_bookmarks_gets_one_before_its_timeout(apiserver):
    ns = apiserver.namespace()
    path = f"/api/v1/namespaces/{ns}/configmaps"
    seen = apiserver.request("POST", path, body={"metadata": {"name": "seen"}}).json()
    later = apiserver.request("POST", path, body={"metadata": {"name": "later"}}).json()
    since = {"resourceVersion": seen["metadata"]["resourceVersion"], "timeoutSeconds": "4"}
    elsewhere = apiserver.namespace()

    def write_elsewhere():  # a ConfigMap write this namespaced watch does not see: the bookmark's news
        time.sleep(0.5)
        apiserver.request("POST", f"/api/v1/namespaces/{elsewhere}/configmaps", body={"metadata": {"name": "x"}})

    writer = threading.Thread(target=write_elsewhere)
    writer.start()
    events = watch_lines(apiserver, path, {"allowWatchBookmarks": "true", **since})
    writer.join()
    kinds = [event["type"] for _, event in events]
    # From 2 s before the watch's deadline, a bookmark about every second until it ends.
    assert kinds[0] == "ADDED" and kinds[-1] == "END" and set(kinds[1:-1]) == {"BOOKMARK"}, events
    assert events[0][1]["object"]["metadata"]["name"] == "later"
    at, bookmark = events[1]
    assert 0.9 <= at <= 3.5, at  # the real server files watchers by whole seconds: up to 1 s early
    assert (bookmark["object"]["kind"], bookmark["object"]["apiVersion"]) == ("ConfigMap", "v1")
    # The kind's latest write the server has seen, newer than anything this watch got: resume from there.
    assert int(bookmark["object"]["metadata"]["resourceVersion"]) > int(later["metadata"]["resourceVersion"])
    assert events[-1][0] >= 3.5  # and the watch still runs to its end

    without = watch_lines(apiserver, path, since)  # not asked for: none
    assert [event["type"] for _, event in without] == ["ADDED", "END"]


def test_a_watch_from_a_future_resource_version_sees_nothing_until_it_ends(apiserver):
    ns = apiserver.namespace()
    events = watch_lines(apiserver, f"/api/v1/namespaces/{ns}/configmaps",
                         {"resourceVersion": "99999999", "timeoutSeconds": "2"})
    assert [event["type"] for _, event in events] == ["END"] and events[-1][0] >= 1.5
