"""Who may open the web chat: a sign-in off loopback, and a slowdown for guessing passwords.

``check_exposure`` refuses to serve beyond this machine without a sign-in unless told so
(``--no-auth``, with a warning). ``LoginGuard`` checks the password for gradio's sign-in
form: each wrong attempt waits ``delay`` seconds, attempts are taken one at a time, and
after ``free_tries`` wrong ones in a row the name is locked for ``lock_s`` seconds (doubling
with each lock, up to ``max_lock_s``), the right password included.
"""

from __future__ import annotations

import asyncio
import hmac
import ipaddress
import time
from dataclasses import dataclass, field

from rag import ConfigError


def is_loopback(host: str) -> bool:
    """Whether only this machine can reach ``host`` (``0.0.0.0`` and names are not)."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def check_exposure(host: str, credentials: tuple[str, str] | None, no_auth: bool) -> str:
    """A warning to print, or "" when none is due; ``ConfigError`` for an open chat off
    loopback that nobody asked for."""
    if credentials is not None or is_loopback(host):
        return ""
    if not no_auth:
        raise ConfigError(
            f"Serving on {host} lets other machines in: pass --auth user:pass (or set "
            "RAG_SERVE__AUTH), or --no-auth to serve without a sign-in."
        )
    return (
        f"warning: the web chat on {host} is open to anyone who can reach this machine, "
        "with no sign-in (--no-auth)."
    )


@dataclass
class _Failures:
    count: int = 0
    locks: int = 0
    until: float = 0.0


@dataclass
class LoginGuard:
    """The sign-in check for one user name and password (``check`` is gradio's ``auth``)."""

    user: str
    password: str
    delay: float = 1.0
    free_tries: int = 5
    lock_s: float = 60.0
    max_lock_s: float = 900.0
    _failures: dict[str, _Failures] = field(default_factory=dict)
    _turn: asyncio.Lock | None = None

    async def check(self, user: str, password: str) -> bool:
        """Whether to let ``user`` in (gradio awaits it: pass ``guard.check``, not the guard,
        which it would call without awaiting)."""
        from fastapi import HTTPException

        self._turn = self._turn or asyncio.Lock()
        async with self._turn:  # one attempt at a time: parallel guesses wait in line
            key = user if user == self.user else ""  # every unknown name counts as one
            failures = self._failures.setdefault(key, _Failures())
            wait = failures.until - time.monotonic()
            if wait > 0:
                raise HTTPException(
                    status_code=429,
                    detail=f"Too many wrong sign-ins. Try again in {wait:.0f} s.",
                )
            if self._matches(user, password):
                self._failures.pop(key, None)
                return True
            failures.count += 1
            if failures.count >= self.free_tries:
                failures.until = time.monotonic() + min(
                    self.lock_s * 2**failures.locks, self.max_lock_s
                )
                failures.locks += 1
                failures.count = 0
            await asyncio.sleep(self.delay)
            return False

    def _matches(self, user: str, password: str) -> bool:
        same_user = hmac.compare_digest(user.encode(), self.user.encode())
        return hmac.compare_digest(password.encode(), self.password.encode()) and same_user
