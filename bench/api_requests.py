"""What a run asked of the real cluster's API server, read from its `/metrics` before and after: requests by verb
and resource (`apiserver_request_total`, a watch counted when it opens) and the events its watches sent, by kind
(`apiserver_watch_events_total`). bench.versus_kube prints both sides': the API server's extra CPU on PaaS Studio's
side is what the product asks of it beyond the Jobs themselves."""

import re

SAMPLE = re.compile(r'^(apiserver_request_total|apiserver_watch_events_total)\{([^}]*)\} ([0-9.e+]+)$')
LABEL = re.compile(r'(\w+)="([^"]*)"')


def snapshot(session, url: str) -> dict[str, float]:
    """{"list pods", "watch events: Pod", ...: count so far} from the API server's metrics."""
    counts: dict[str, float] = {}
    for line in session.get(f"{url}/metrics", timeout=30).text.splitlines():
        found = SAMPLE.match(line)
        if not found:
            continue
        labels = dict(LABEL.findall(found.group(2)))
        if found.group(1) == "apiserver_request_total":
            resource = labels.get("resource", "") + (f"/{labels['subresource']}" if labels.get("subresource") else "")
            key = f"{labels.get('verb', '').lower()} {resource}"
        else:
            key = f"watch events: {labels.get('kind') or labels.get('resource', '')}"
        counts[key] = counts.get(key, 0.0) + float(found.group(3))
    return counts


def spent(before: dict, after: dict, least: float = 10) -> dict[str, int]:
    """What grew between the readings, by at least `least`, the largest first."""
    grown = {key: int(value - before.get(key, 0.0)) for key, value in after.items()}
    return dict(sorted(((k, v) for k, v in grown.items() if v >= least), key=lambda item: -item[1]))
