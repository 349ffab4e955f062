"""`make bench`: every benchmark in one run on PostgreSQL, Redis and gunicorn on loopback (bounded load that
stops by itself); prints a table of ratios and writes it, with the machine, to docs/benchmarks.md."""

import datetime
import sys
from pathlib import Path

from bench import api_read, catalog, env, pipeline, scaling, sync, usage_history, watch

DOC = Path(__file__).resolve().parent.parent / "docs" / "benchmarks.md"


def _row(name, value, target, met):
    return f"| {name} | {value} | {target} | {'—' if met is None else 'met' if met else 'MISSED'} |"


def _sync_limit(round_: dict) -> int:
    return 3 if round_["label"].startswith("steady") else 5  # issue 17: < 3 s steady, < 5 s with 10,000 changes


def _load() -> str:
    return " / ".join(Path("/proc/loadavg").read_text().split()[:3]) + " (1 / 5 / 15 min)"


def main() -> int:
    load_before = _load()
    rows = []
    read = api_read.run()
    api, bare = read["api"], read["bare"]
    rows.append(_row("API read, in process: CPU per request, list ÷ bare view (200 requests each)",
                     f"{read['api_cpu']:.1f} / {read['bare_cpu']:.1f} ms = {read['api_cpu'] / read['bare_cpu']:.2f}",
                     "<= 1.4", read["api_cpu"] / read["bare_cpu"] <= 1.4))
    rows.append(_row("API read, in process: the same, every row rendered again (no kept rows)",
                     f"{read['cold_cpu']:.1f} / {read['bare_cpu']:.1f} ms = {read['cold_cpu'] / read['bare_cpu']:.2f}",
                     "<= 1.5", read["cold_cpu"] / read["bare_cpu"] <= 1.5))
    rows.append(_row("API read: throughput vs bare JSON view (16 connections)",
                     f"{api.throughput:.0f} / {bare.throughput:.0f} req/s = {read['ratio']:.0%}", ">= 75%",
                     read["ratio"] >= 0.75))
    rows.append(_row("API read: p50 / p99 (bare view: p50 / p99)",
                     f"{api.p50:.0f} / {api.p99:.0f} ms ({bare.p50:.0f} / {bare.p99:.0f} ms)", "p99 < 100 ms",
                     api.p99 < 100))
    write = pipeline.run()
    w = write["writes"]
    rows.append(_row("API write: sustained rate, p50 / p99 (16 connections, workers running)",
                     f"{w.throughput:.0f} req/s, {w.p50:.0f} / {w.p99:.0f} ms, {w.errors} errors", ">= 100/s, 0 errors",
                     w.errors == 0 and w.throughput >= 100))
    rows.append(_row("Pipeline: 1,000 workloads, accept → Job on the cluster (2 worker processes)",
                     f"{write['pipeline_rate']:.1f} workloads/s ({write['pipeline_seconds']:.1f} s)", ">= 50/s",
                     write["pipeline_rate"] >= 50))
    synced = sync.run()
    for r in synced["rounds"]:
        rows.append(_row(f"Sync 10,000 workloads / 20 namespaces, {r['label']}",
                         f"{r['seconds']:.1f} s; {r['lists']} lists (minimum {r['minimum']}) = "
                         f"{r['lists'] / r['minimum']:.2f}x; {r['gets']} GETs; {r['queries']} queries",
                         f"< {_sync_limit(r)} s, lists = minimum, 0 GETs",
                         r["seconds"] < _sync_limit(r) and r["lists"] <= r["minimum"] and r["gets"] == 0))
    cat = catalog.run()
    c = cat["catalog"]
    rows.append(_row("Catalog: 1,000 profiles, mixed sharing, 100 per page (16 connections)",
                     f"{c.throughput:.0f} req/s, p50 {c.p50:.0f} / p99 {c.p99:.0f} ms; {cat['queries']} queries",
                     "queries flat", cat["queries"] <= 8))
    rows.append(_row("Catalog under load: p99 ÷ the bare view's p99 (16 connections each)",
                     f"{c.p99:.0f} / {bare.p99:.0f} ms = {c.p99 / bare.p99:.2f}", "<= 2", c.p99 / bare.p99 <= 2))
    print("\n".join(rows), flush=True)
    scaled = scaling.run()
    scale_table = _scaling_table(scaled)
    print(scale_table, flush=True)
    rows.extend(_ratio_rows(scaled))
    history = usage_history.run()
    usage_table = _usage_table(history)
    print(usage_table, flush=True)
    rows.extend(_usage_rows(history))
    rows.extend(_watch_rows(watch.run()))
    table = "\n".join(["| Benchmark | Measured | Target | |", "|---|---|---|---|", *rows])
    print(table)
    DOC.parent.mkdir(exist_ok=True)
    DOC.write_text(
        "# Benchmarks\n\n"
        f"One `make bench` run on {datetime.date.today().isoformat()}: PostgreSQL and Redis on loopback, gunicorn "
        "(2 workers × 8 threads), the simulated cluster in its own process, the load generator in `bench/load.py` "
        "(closed loop, bounded by request count and time).\n\n"
        f"Machine: {env.machine()}; load average when the run began: {load_before}, when it ended: "
        f"{_load()}. The load generator, server, workers and cluster share these cores, so "
        "ratios measured in the same run are the figures to compare, not absolute numbers.\n\n"
        f"{table}\n\n### Scaling (in process)\n\n{scale_table}\n\n### Usage history (in process, a year of history)\n\n"
        f"{usage_table}\n\n{NOTES}\n"
    )
    return 0  # a report, not a gate: a missed target is named in the table and explained in the notes


def _ratio_rows(scaled: dict) -> list[str]:
    """Submission and catalog CPU in process (the scaling table, at every size) ÷ the bare view's CPU measured at
    the same size in the same process: the worst size counts."""
    rows = []
    floor = "bare view (the floor)"
    for path, name, target in (("submit, no GPU", "Submit, no GPU", 1.5), ("submit, 1 GPU", "Submit, 1 GPU", 1.5),
                               ("catalog API (limit=100)", "Catalog API (limit=100)", 2.0)):
        ratios = [scaled[size][path][0] / scaled[size][floor][0] for size in scaled]
        cells = " / ".join(f"{scaled[size][path][0]:.1f} ÷ {scaled[size][floor][0]:.1f}" for size in scaled)
        rows.append(_row(f"{name}: CPU in process ÷ the bare view's ({' / '.join(f'{w:,}' for w, _ in scaled)} "
                         "workloads)", f"{cells} ms = {_span(ratios)}",
                         f"<= {target}", max(ratios) <= target))
    return rows


USAGE_TARGETS = {usage_history.PATHS[1]: 3.0, usage_history.PATHS[2]: 3.0, usage_history.PATHS[3]: 1.5}


def _usage_rows(history: dict) -> list[str]:
    """A department's 30-day usage and a year-long report request ÷ the bare view, CPU and wall, at every size: the
    worst size counts, and the largest size's wall within 1.5x the smallest's (flat)."""
    rows, floor, sizes = [], usage_history.PATHS[0], list(history)
    for path, target in USAGE_TARGETS.items():
        cpu = [history[s][path][0] / history[s][floor][0] for s in sizes]
        wall = [history[s][path][1] / history[s][floor][1] for s in sizes]
        flat = history[sizes[-1]][path][1] <= 1.5 * history[sizes[0]][path][1]
        rows.append(_row(f"Usage, a year of history: {path} ÷ the bare view, CPU / wall "
                         f"({' / '.join(f'{s:,}' for s in sizes)} workloads)",
                         f"{_span(cpu)} / {_span(wall)}; wall {history[sizes[0]][path][1]:.1f} → "
                         f"{history[sizes[-1]][path][1]:.1f} ms",
                         f"<= {target}, flat", max(cpu) <= target and max(wall) <= target and flat))
    made = [history[s]["year-long report, made by the worker"][1] for s in sizes]
    rows.append(_row("Usage: the year-long report (grouped by project), made by the worker "
                     f"({' / '.join(f'{s:,}' for s in sizes)} workloads)",
                     " / ".join(f"{m / 1000:.1f} s" for m in made)
                     + f" ({history[sizes[-1]]['report lines']:,} lines)", "flat", made[-1] <= 1.5 * made[0]))
    return rows


def _usage_table(history: dict) -> str:
    sizes = list(history)
    lines = [f"| Path (ms per request: CPU / wall) | {' | '.join(f'{s:,} workloads' for s in sizes)} |",
             "|---" * (len(sizes) + 1) + "|"]
    for path in (*usage_history.PATHS, "year-long report, made by the worker"):
        lines.append(f"| {path} | " + " | ".join(f"{history[s][path][0]:.1f} / {history[s][path][1]:.1f}"
                                                for s in sizes) + " |")
    return "\n".join(lines)


def _watch_rows(watched: dict) -> list[str]:
    """The cluster loop by watch (bench/watch.py) at each size: idle CPU, change → API latency, a burst, and the
    requests the product sends the cluster API, against one round of the sync as beat ran it every 5 s."""
    rows = []
    for size, w in watched.items():
        n = f"{size:,} workloads"
        rows.append(_row(f"Watch, {n}: the watcher's CPU while nothing changes ({w['idle_seconds']:.0f} s)",
                         f"{w['idle_cpu_share']:.2%} of a core (the {watch.SETTLE_SECONDS} s right after the first "
                         f"pass: {w['settle_cpu_share']:.1%}; a round as before: {w.get('round_cpu_seconds', float('nan')):.1f} s "
                         f"CPU, {w.get('round_cpu_share', float('nan')):.0%} of a core at one every 5 s)",
                         "<= 2% of a core",
                         w["idle_cpu_share"] <= 0.02))
        rows.append(_row(f"Watch, {n}: a change on the cluster → its phase in the API, p50 / p99 / max "
                         f"({watch.CHANGES} changes)", f"{w['latency_p50']:.2f} / {w['latency_p99']:.2f} / "
                         f"{w['latency_max']:.2f} s", "p99 <= 2 s", w["latency_p99"] <= 2))
        rows.append(_row(f"Watch, {n}: a burst of {watch.BURST:,} changes → all applied",
                         f"{w['burst_seconds']:.1f} s ({w['burst_cpu_seconds']:.1f} s CPU of the watcher)",
                         "<= 30 s", w["burst_seconds"] <= 30))
        rows.append(_row(f"Watch, {n}: requests per second to the cluster API, idle / burst (a round every 5 s "
                         "before)", f"{w['idle_rps']:.2f} / {w['burst_rps']:.2f} req/s "
                         f"(a round: {w.get('round_requests', '?')} requests in {w.get('round_seconds', float('nan')):.1f} s, "
                         f"{w.get('round_rps', float('nan')):.1f} req/s at one every 5 s)", "no target", None))
        rows.append(_row(f"Watch, {n}: the watcher's first pass; its memory after the burst",
                         f"{w['first_pass_seconds']:.1f} s (from the watcher's start: "
                         f"{w['first_pass_from_start_seconds']:.1f} s; started again on the rows it wrote: "
                         f"{w['restart_first_pass_seconds']:.1f} s; the floor, its Jobs and pods LISTed by the "
                         f"official client: {w['floor_list_seconds']:.1f} s decoded, {w['floor_wire_seconds']:.1f} s "
                         f"the wire alone); {w['watcher_rss_mib']:.0f} MiB RSS (peak "
                         f"{w.get('watcher_peak_rss_mib', float('nan')):.0f} MiB)", "first pass <= 10 s, RSS <= 300 MiB "
                         "at 100,000", w["first_pass_seconds"] <= 10 and (size < 100_000 or w["watcher_rss_mib"] <= 300)))
    return rows


SCALING_TARGETS = {"bare view (the floor)": "flat", "workload list (limit=100)": "flat", "submit, no GPU": "<= 10 ms CPU, flat",
                   "submit, 1 GPU": "<= 10 ms CPU, flat", "catalog API (limit=100)": "<= 15 ms, flat",
                   "portal /catalog page": "flat"}


def _scaling_table(scaled: dict) -> str:
    """ms per request at each size, CPU in process / wall; flat = the largest size's CPU within 1.5x the smallest."""
    sizes = list(scaled)
    head = " | ".join(f"{w:,} workloads, {p:,} profiles" for w, p in sizes)
    lines = [f"| Path (ms per request: CPU / wall) | {head} | Target | |", "|---" * (len(sizes) + 3) + "|"]
    for path in scaling.PATHS:
        cells = " | ".join(f"{scaled[s][path][0]:.1f} / {scaled[s][path][1]:.1f}" for s in sizes)
        first, last = scaled[sizes[0]][path][0], scaled[sizes[-1]][path][0]
        target = SCALING_TARGETS[path]
        met = last <= 1.5 * first and (not target.startswith("<=") or last <= float(target.split()[1]))
        lines.append(f"| {path} | {cells} | {target} | {'met' if met else 'MISSED'} |")
    return "\n".join(lines)


def _span(ratios) -> str:
    """"1.20–1.29", or one figure where every size gave the same."""
    low, high = f"{min(ratios):.2f}", f"{max(ratios):.2f}"
    return low if low == high else f"{low}–{high}"


NOTES = (Path(__file__).resolve().parent / "NOTES.md").read_text() if (Path(__file__).resolve().parent
                                                                        / "NOTES.md").exists() else ""

if __name__ == "__main__":
    sys.exit(main())
