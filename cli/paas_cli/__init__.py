"""PaaS Studio's command line: a client of the HTTP API only (it imports nothing of the server)."""

__version__ = "0.1.0"
