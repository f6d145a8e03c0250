"""Why a device did not answer, named the way a user fixes it: refused, timeout, tls, token, dns or down.

The name comes from the exception itself where there is one (:func:`failure_of`: the HTTP status a client
recorded, the SSL, refused, DNS or timeout error anywhere in its cause chain). :func:`failure_state` reads a
message only when nothing else is left (a saved detail, a job's error text), and never the addresses in it: a
TLS failure at ``https://127.0.0.1:40133`` once read as "token rejected" because its port held "401".
"""

from __future__ import annotations

import re
import socket
import ssl

TOKEN_STATUSES = (401, 403)
DNS_WORDS = ("name or service not known", "nodename nor servname", "temporary failure in name resolution",
             "getaddrinfo failed", "no address associated with hostname", "name does not resolve")
_ADDRESSES = re.compile(r"\b[a-z][a-z0-9+.-]*://\S+|\[[0-9a-f:]+\](:\d+)?|\b[\w.-]+:\d{1,5}\b", re.IGNORECASE)
_TOKEN_STATUS = re.compile(r"\bHTTP[ /]?(?:status )?(401|403)\b|\[(401|403)\]|\((401|403)\)|"
                           r"\b(401|403) (unauthorized|forbidden)\b|\bstatus(?: code)?[ :=]+(401|403)\b",
                           re.IGNORECASE)


def without_addresses(message: str) -> str:
    """The message with its URLs and host:port pairs blanked (they name the device, not the failure)."""
    return _ADDRESSES.sub(" ", message or "")


def token_status(message: str) -> int | None:
    """The 401 / 403 a message reports as an HTTP status, if any (never a port or a URL's digits)."""
    m = _TOKEN_STATUS.search(without_addresses(message))
    return int(next(g for g in m.groups() if g and g.isdigit())) if m else None


def failure_state(message: str) -> str:
    """A failure named from its message alone (addresses ignored): token, tls, timeout, refused, dns or down."""
    m = without_addresses(message).lower()
    if token_status(message) is not None or "token" in m or "unauthorized" in m or "forbidden" in m:
        return "token"
    if "ssl" in m or "tls" in m or "certificate" in m:
        return "tls"
    if "timed out" in m or "timeout" in m:
        return "timeout"
    if "refused" in m or "errno 111" in m:
        return "refused"
    if any(w in m for w in DNS_WORDS):
        return "dns"
    return "down"


def _chain(exc: BaseException) -> list[BaseException]:
    seen: list[BaseException] = []
    e: BaseException | None = exc
    while e is not None and e not in seen and len(seen) < 16:
        seen.append(e)
        e = e.__cause__ or e.__context__
    return seen


def failure_of(exc: BaseException) -> str:
    """The failure an exception stands for, from its type and cause chain; its message only as a last resort."""
    for e in _chain(exc):
        details = getattr(e, "details", None)
        if isinstance(details, dict) and details.get("status") in TOKEN_STATUSES:
            return "token"
        if isinstance(e, (ssl.SSLError, ssl.CertificateError)):
            return "tls"
        if isinstance(e, ConnectionRefusedError):
            return "refused"
        if isinstance(e, socket.gaierror):
            return "dns"
        if isinstance(e, TimeoutError) or type(e).__name__.endswith("Timeout"):  # gevent's and httpx's own
            return "timeout"
    return failure_state(str(exc))
