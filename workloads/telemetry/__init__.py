"""Metric reads and Run:ai telemetry: stored samples reduced to points, workload and org-unit telemetry and
metrics, the /metrics gauge of workloads by phase; the clusters as GPU pools and the quota use of projects
and departments, for the portal's pages."""
