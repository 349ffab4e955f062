"""Reads for the Usage page: GPU-hours (allocated, used, idle, unmeasured) and chargeback cost per project,
department or user over a range, from the same history and prices as the reports (usage.selectors.usage_rows,
NodePoolPrice)."""

from dataclasses import dataclass, field
from datetime import datetime

from usage.models import NodePoolPrice
from usage.selectors import usage_rows

BY = {"project": ("project_id", "project_name", "department_name"),  # key, name, and what the line also says
      "department": ("department_id", "department_name", None),
      "user": ("user_name", "user_name", None)}


@dataclass
class ProjectUsage:
    project_id: object  # the line's key: a project's or a department's id, or a user's name
    project: str  # its name
    department: str  # a project's department; "" for the other groupings
    gpu_hours: float = 0.0
    used_hours: float = 0.0
    idle_hours: float = 0.0
    unmeasured_hours: float = 0.0
    cpu_core_hours: float = 0.0
    memory_gib_hours: float = 0.0
    gpu_cost: float = 0.0
    idle_cost: float = 0.0
    total_cost: float = 0.0
    users: set = field(default_factory=set)


def project_usage(*, start: datetime, end: datetime, projects: dict[int, str] | None,
                  by: str = "project") -> list[ProjectUsage]:
    """One line per project (department, user: `by`) that used anything in [start, end), largest GPU-hours first.
    `projects`: {id: name} of the projects to count (None: every project). Three queries."""
    key, name, detail = BY[by]
    filters = {"projectName": set(projects.values())} if projects is not None else {}
    if projects is not None and not projects:
        return []
    prices = {(str(cluster), pool): (float(gpu), float(cpu), float(memory)) for cluster, pool, gpu, cpu, memory in
              NodePoolPrice.objects.values_list("node_pool__cluster_id", "node_pool__name", "gpu_hour",
                                                "cpu_core_hour", "memory_gib_hour")}
    lines: dict[object, ProjectUsage] = {}
    for row in usage_rows(start=start, end=end, filters=filters):
        if projects is not None and row["project_id"] not in projects:
            continue  # a project of the same name that was deleted and made again
        line = lines.setdefault(row[key], ProjectUsage(row[key], row[name], row[detail] if detail else ""))
        gpu, cpu, memory = prices.get((str(row["cluster_id"]), row["node_pool"]), (0.0, 0.0, 0.0))
        idle = row["gpu_measured_hours"] - row["gpu_used_hours"]
        line.gpu_hours += row["gpu_hours"]
        line.used_hours += row["gpu_used_hours"]
        line.idle_hours += idle
        line.unmeasured_hours += row["gpu_hours"] - row["gpu_measured_hours"]
        line.cpu_core_hours += row["cpu_core_hours"]
        line.memory_gib_hours += row["memory_gib_hours"]
        line.gpu_cost += row["gpu_hours"] * gpu
        line.idle_cost += idle * gpu
        line.total_cost += row["gpu_hours"] * gpu + row["cpu_core_hours"] * cpu + row["memory_gib_hours"] * memory
        line.users.add(row["user_name"])
    return sorted(lines.values(), key=lambda u: (-u.gpu_hours, u.project))
