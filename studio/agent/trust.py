"""Keys pushed to the agent over its management API, kept in ``DATA/trusted/KEYID.pub``.

Why a separate store: the ``--trust`` files are the board owner's (read-only to the agent); a studio that
holds the management token may add its signing key only where the owner started the agent with
``--allow-trust-push``. Pushed keys are loaded at every start (whether or not pushing is still allowed), so
versions signed by them resume after a reboot; removing the file revokes the key at the next start.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from studio.core.atomic import write_text_atomic
from studio.core.errors import InputError
from studio.edge.trust import TrustedKeys, key_id, parse_public_keys, public_key_line

_LABEL_RE = re.compile(r"[^A-Za-z0-9._-]+")


class TrustPushRefused(InputError, kind="auth"):
    """The agent was not started with --allow-trust-push (HTTP 403)."""


@dataclass
class PushedKey:
    key_id: str
    label: str
    new: bool

    def to_dict(self) -> dict[str, object]:
        return dict(self.__dict__)


class TrustStore:
    """``DATA/trusted``: one ``ed25519 <base64> LABEL`` line per pushed key."""

    def __init__(self, root: Path, trusted: TrustedKeys, *, allow_push: bool) -> None:
        self.folder = Path(root) / "trusted"
        self.trusted = trusted
        self.allow_push = allow_push

    def load(self) -> list[str]:
        """Add the keys pushed earlier to ``trusted``; returns their ids."""
        ids = []
        for f in sorted(self.folder.glob("*.pub")) if self.folder.is_dir() else []:
            for k in parse_public_keys(f.read_text(encoding="utf-8"), str(f)):
                self.trusted.add(k)
                ids.append(key_id(k))
        return ids

    def pushed_ids(self) -> list[str]:
        return sorted(f.stem for f in self.folder.glob("*.pub")) if self.folder.is_dir() else []

    def push(self, text: str) -> PushedKey:
        """Trust one key line from now on (and after restarts); the same key twice is not an error."""
        if not self.allow_push:
            raise TrustPushRefused("this agent does not accept keys over the network", offending="--allow-trust-push",
                                   hint="copy the .pub file to the board and restart the agent with --trust FILE, "
                                        "or start it with --allow-trust-push")
        keys = parse_public_keys(text or "", "request")
        if len(keys) != 1:
            raise InputError(f"expected exactly one public key line, got {len(keys)}", offending="key",
                             hint="send the line `studio keys export-public NAME` prints")
        raw = keys[0]
        parts = text.split()
        label = _LABEL_RE.sub("-", parts[2])[:64] if len(parts) > 2 else "pushed"
        kid = key_id(raw)
        new = raw not in self.trusted
        self.folder.mkdir(parents=True, exist_ok=True)
        write_text_atomic(self.folder / f"{kid}.pub", public_key_line(raw, label) + "\n")
        self.trusted.add(raw)
        return PushedKey(kid, label, new)
