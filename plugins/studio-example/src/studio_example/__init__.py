"""Example Deployment Studio plugin (kept light: the studio lists it from ``manifest`` alone)."""

__version__ = "0.1.0"
