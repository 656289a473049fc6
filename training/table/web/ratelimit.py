"""Token buckets: how many messages a socket, and a client address, may send.

A :class:`TokenBucket` holds up to ``burst`` tokens and gains ``rate`` a second; each message takes
one. A person's page sends a message per click, far under any bucket here, so only a script
flooding the server runs one dry. :class:`Buckets` keeps one bucket per key (a client address),
forgetting those that have filled up again, so a stream of new addresses cannot grow it without
bound.

>>> now = [0.0]
>>> bucket = TokenBucket(rate=1.0, burst=3, clock=lambda: now[0])
>>> [bucket.take() for _ in range(4)]
[True, True, True, False]
>>> now[0] = 1.5
>>> bucket.take(), bucket.take()
(True, False)
"""

from __future__ import annotations

import time
from collections.abc import Callable


class TokenBucket:
    """``burst`` tokens at most, ``rate`` more a second; :meth:`take` spends one."""

    def __init__(
        self, rate: float, burst: float, clock: Callable[[], float] = time.monotonic
    ) -> None:
        if not (rate > 0 and burst >= 1):
            raise ValueError(f"a token bucket needs rate > 0 and burst >= 1, got {rate}, {burst}")
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._at = clock()

    def _refill(self) -> float:
        now = self._clock()
        self._tokens = min(self.burst, self._tokens + (now - self._at) * self.rate)
        self._at = now
        return self._tokens

    def take(self) -> bool:
        """Spend a token if there is one; whether there was."""
        if self._refill() < 1:
            return False
        self._tokens -= 1
        return True

    @property
    def full(self) -> bool:
        """Whether the bucket has filled up again (nothing to remember about its owner)."""
        return self._refill() >= self.burst


class Buckets:
    """One :class:`TokenBucket` per key, made on first use; at most ``most`` kept (full ones are
    forgotten first; past that, the oldest)."""

    def __init__(
        self,
        rate: float,
        burst: float,
        clock: Callable[[], float] = time.monotonic,
        most: int = 10_000,
    ) -> None:
        TokenBucket(rate, burst, clock)  # the values are checked at once
        self.rate = rate
        self.burst = burst
        self._clock = clock
        self._most = most
        self._buckets: dict[str, TokenBucket] = {}

    def take(self, key: str) -> bool:
        """Spend one of ``key``'s tokens if it has one; whether it had."""
        bucket = self._buckets.get(key)
        if bucket is None:
            if len(self._buckets) >= self._most:
                self._forget()
            bucket = self._buckets[key] = TokenBucket(self.rate, self.burst, self._clock)
        return bucket.take()

    def _forget(self) -> None:
        full = [k for k, b in self._buckets.items() if b.full]
        for key in full or list(self._buckets)[: max(1, self._most // 10)]:
            del self._buckets[key]
