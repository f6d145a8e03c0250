"""The schema of a fleet file (WORKSPACE/fleets/NAME.yaml) as a pydantic model; ``studio.fleet.fleet_file`` validates
through it, so a malformed file is an InputError naming ``FILE:LINE: FIELD``.

Tokens are held by reference, the way the workspace keeps an agent's (``DeviceEntry.extra["token_file"]``): the
PATH of the token file, never the token.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, StrictStr, field_validator

from studio.core.resource_schema import ResourceModel

WHAT = "fleet file"
HINT = "each agent needs a unique name and URL; `studio fleet add URL --token-file FILE --label ring=canary` " \
       "writes a valid entry"

Name = Annotated[StrictStr, Field(min_length=1, pattern=r"^[A-Za-z0-9][A-Za-z0-9._:-]*$")]
LABEL_KEYS = ("board", "site", "ring")


class AgentSpec(ResourceModel):
    """One agent of the fleet: where it listens, its labels, and where its management token is kept."""

    name: Name = Field(description="unique within the fleet (default: HOST:PORT of the URL)")
    url: StrictStr = Field(min_length=1, description="http(s)://HOST:PORT of studio-agent")
    labels: dict[str, str] = Field(default_factory=dict, description="board, site, ring and your own keys")
    token_file: str | None = Field(None, description="PATH of the agent's token file (relative to the workspace); "
                                                     "default: the workspace device's or the fleet's")
    ca: str | None = Field(None, description="CA certificate to check an HTTPS agent with")
    infer_token_file: str | None = Field(None, description="PATH of the inference token file, for an agent started "
                                                           "with --infer-token-file (the probe sends it)")

    @field_validator("url")
    @classmethod
    def _http(cls, v: str) -> str:
        if not v.startswith(("http://", "https://")):
            raise ValueError(f"url {v!r} must start with http:// or https://")
        return v.rstrip("/")


class FleetFile(ResourceModel):
    """A named set of agents; the order is the order rings are filled in."""

    schema_version: Literal[1] = 1
    name: Name
    token_file: str | None = Field(None, description="default token file for agents that name none")
    agents: list[AgentSpec] = Field(default_factory=list)
