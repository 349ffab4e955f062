"""The organisation: departments and projects as Run:ai shapes them, per-node-pool quotas, the organisation
pages."""
