"""Usage history (hourly and daily roll-ups), Run:ai's Reports, and chargeback prices (docs/usage-and-reports.md)."""
