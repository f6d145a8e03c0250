"""Why a device is down, in the words a user fixes it by, for every table and list that shows devices.

studio.core.device_failure names the failure (refused, timeout, tls, token, dns, down) from the poll's
exception; here that name becomes a short phrase (a saved "down" whose message is a failed lookup still reads
as DNS). Qt-free.
"""

from __future__ import annotations

import re

from PySide6.QtCore import QT_TRANSLATE_NOOP, QCoreApplication

from studio.core.device_failure import DNS_WORDS, token_status, without_addresses
from studio.core.state import OK_STATES, PENDING_STATES, DeviceState

REASONS = {  # in English; shown through _tr (the current language)
    "refused": QT_TRANSLATE_NOOP("DeviceReasons", "connection refused"),
    "timeout": QT_TRANSLATE_NOOP("DeviceReasons", "timed out"),
    "tls": QT_TRANSLATE_NOOP("DeviceReasons", "TLS handshake failed"),
    "token": QT_TRANSLATE_NOOP("DeviceReasons", "token rejected"),
    "dns": QT_TRANSLATE_NOOP("DeviceReasons", "host name not found (DNS)"),
}
PLAIN_HTTP_WORDS = ("wrong version number", "record layer failure", "unknown protocol", "http_request")
# the client's own framing, dropped so the phrase is the transport's words
_PREFIX = re.compile(r"^(Triton server at \S+ did not answer \([^)]*\): |cannot reach agent at \S+: )")


def _tr(text: str) -> str:
    return QCoreApplication.translate("DeviceReasons", text)


def reason_key(state: str, detail: str = "") -> str:
    """The failure's name: the device state, or "dns" for a "down" whose message is a failed lookup."""
    if state == "down" and any(w in (detail or "").lower() for w in DNS_WORDS):
        return "dns"
    return state


def down_reason(state: str, detail: str = "") -> str:
    """A short phrase for a failed device: "connection refused", "token rejected (HTTP 401)", ..."""
    key, low = reason_key(state, detail), without_addresses(detail).lower()
    if key == "token":
        code = token_status(detail)
        return _tr(REASONS["token"]) + (f" (HTTP {code})" if code else "")
    if key == "tls":
        if "certificate" in low:
            return QCoreApplication.translate("DeviceReasons", "TLS certificate not trusted")
        if any(w in low for w in PLAIN_HTTP_WORDS):
            return QCoreApplication.translate("DeviceReasons", "TLS mismatch: the server speaks plain HTTP")
    if key in REASONS:
        return _tr(REASONS[key])
    text = _PREFIX.sub("", (detail or "").strip().splitlines()[0] if (detail or "").strip() else "")
    return (text[:77] + "...") if len(text) > 80 else (text or QCoreApplication.translate("DeviceReasons", "not answering"))


def status_text(ds: DeviceState) -> str:
    """One device's state as the tables show it: connected, connecting..., or disconnected: REASON."""
    if ds.state in OK_STATES:
        return QCoreApplication.translate("DeviceReasons", "connected")
    if ds.state in PENDING_STATES:
        return QCoreApplication.translate("DeviceReasons", "connecting...") if ds.state == "connecting" else QCoreApplication.translate("DeviceReasons", "not checked yet")
    return QCoreApplication.translate("DeviceReasons", "disconnected: {reason}").format(reason=down_reason(ds.state, ds.detail))
