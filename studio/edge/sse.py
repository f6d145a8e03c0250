"""The one parser of a server-sent-events line of the generate extension (``generate_stream``), spoken by the edge
agent and Triton alike: the generate client (``studio.triton.generate_client``) and the load generator
(``studio.telemetry.genload``) both read their streams with it, so it sits below both."""

from __future__ import annotations

import json
from typing import Any


def sse_data(line: str) -> dict[str, Any] | None:
    """One server-sent-events line: the JSON of a ``data:`` line, None for anything else (comments, blanks)."""
    if not line.startswith("data:"):
        return None
    try:
        ev = json.loads(line[5:])
    except ValueError:
        return {"error": f"not JSON: {line[:80]!r}"}
    return ev if isinstance(ev, dict) else {"error": f"not an object: {line[:80]!r}"}
