"""Pure: a report's CSV from the usage rows, its group-by and the node pools' prices.

One line per day, group (Run:ai's `groupBy`: none, Cluster, Nodepool, Department or Project) and submitting user,
so that a group's cost splits by user; a group's total is the sum of its lines. Costs are computed per node pool
(each pool's own prices; a pool without prices costs nothing) and then summed. Idle GPU-hours are the measured
GPU-hours the GPUs were not busy; GPU-hours without a utilisation sample are `gpu_unmeasured_hours`."""

import csv
import io
from collections import defaultdict
from decimal import Decimal

GROUP_COLUMNS = {
    None: (),
    "Cluster": (("cluster_id", "cluster_id"), ("cluster", "cluster_name")),
    "Nodepool": (("cluster_id", "cluster_id"), ("nodepool", "node_pool")),
    "Department": (("department_id", "department_id"), ("department", "department_name")),
    "Project": (("project_id", "project_id"), ("project", "project_name"), ("department", "department_name")),
}
AMOUNT_COLUMNS = ("gpu_allocation_hours", "gpu_utilized_hours", "gpu_idle_hours", "gpu_unmeasured_hours",
                  "cpu_allocation_core_hours", "cpu_utilized_core_hours", "memory_allocation_gib_hours",
                  "memory_utilized_gib_hours")
COST_COLUMNS = ("gpu_cost", "gpu_idle_cost", "cpu_cost", "memory_cost", "total_cost")
NO_PRICE = (Decimal(0), Decimal(0), Decimal(0))


def _amounts(row: dict) -> dict[str, float]:
    return {
        "gpu_allocation_hours": row["gpu_hours"],
        "gpu_utilized_hours": row["gpu_used_hours"],
        "gpu_idle_hours": row["gpu_measured_hours"] - row["gpu_used_hours"],
        "gpu_unmeasured_hours": row["gpu_hours"] - row["gpu_measured_hours"],
        "cpu_allocation_core_hours": row["cpu_core_hours"],
        "cpu_utilized_core_hours": row["cpu_used_core_hours"],
        "memory_allocation_gib_hours": row["memory_gib_hours"],
        "memory_utilized_gib_hours": row["memory_used_gib_hours"],
    }


def _costs(amounts: dict, price: tuple) -> dict[str, float]:
    gpu, cpu, memory = (float(p) for p in price)
    costs = {"gpu_cost": amounts["gpu_allocation_hours"] * gpu, "gpu_idle_cost": amounts["gpu_idle_hours"] * gpu,
             "cpu_cost": amounts["cpu_allocation_core_hours"] * cpu,
             "memory_cost": amounts["memory_allocation_gib_hours"] * memory}
    costs["total_cost"] = costs["gpu_cost"] + costs["cpu_cost"] + costs["memory_cost"]
    return costs


def report_lines(rows: list[dict], *, group_by: str | None, prices: dict, cluster_names: dict) -> tuple[list, list]:
    """(header, lines) — `prices`: {(cluster id as str, pool name): (GPU-hour, core-hour, GiB-hour)}."""
    columns = GROUP_COLUMNS[group_by]
    totals: dict[tuple, dict] = defaultdict(lambda: dict.fromkeys(AMOUNT_COLUMNS + COST_COLUMNS, 0.0))
    for row in rows:
        row = {**row, "cluster_id": str(row["cluster_id"]),
               "cluster_name": cluster_names.get(str(row["cluster_id"]), "")}
        key = (row["day"].isoformat(), *(_text(row[field]) for _, field in columns), _text(row["user_name"]))
        amounts = _amounts(row)
        line = totals[key]
        for name, value in (amounts | _costs(amounts, prices.get((row["cluster_id"], row["node_pool"]), NO_PRICE))).items():
            line[name] += value
    header = ["date", *(name for name, _ in columns), "user", *AMOUNT_COLUMNS, *COST_COLUMNS]
    lines = [[*key, *(_number(values[c]) for c in AMOUNT_COLUMNS + COST_COLUMNS)]
             for key, values in sorted(totals.items())]
    return header, lines


def _text(value) -> str:
    """A name as a cell that a spreadsheet will not run as a formula."""
    text = str(value)
    return "'" + text if text[:1] in ("=", "+", "-", "@", "\t", "\r") else text


def _number(value: float) -> str:
    rounded = round(value, 4)
    return f"{rounded:.4f}".rstrip("0").rstrip(".") if rounded else "0"


def as_csv(header: list, lines: list) -> str:
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(lines)
    return out.getvalue()
