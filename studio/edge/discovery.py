"""The mDNS service agents announce and the studio browses for (agent: ``studio.agent.discovery``; studio:
``studio.package.discovery``); one name, so the two sides cannot drift apart."""

from __future__ import annotations

SERVICE_TYPE = "_studio-agent._tcp.local."
