"""The project's one HTTP retry policy.

Retried: 408, 429 and 5xx answers and network errors, with jittered exponential backoff; a
``Retry-After`` from the server wins over the backoff; attempts and the total time spent
are both bounded. Other 4xx answers are never retried: they are the caller's to fix.

A request that is not idempotent (creating an event type, firing an event) is retried only
when the server cannot have acted on it: it was refused before processing (429, 503) or the
connection was never made.

With a :class:`~connectors.http.breaker.CircuitBreaker` shared by a run's requests, a request
that has seen nothing but network errors and 5xx since it began failing — from any request
of the run — is not given up by the policy's bounds: the breaker decides, so a short outage
costs a wait rather than failed items, and a long one ends the run at once. Its retries are
then logged at debug level only: the breaker says the one thing worth saying.

A :class:`Throttled` answer (the server kept the request back for want of its rate budget,
and the caller's pacing knows the wait: Shopify's ``THROTTLED``) is retried however often,
with no backoff: the caller's pacing before the next attempt is the wait, and bounds it. The
policy's bounds count from the last throttled answer.

The same policy object bounds a blocking retry of something other than HTTP
(:func:`retrying`): a loop that would otherwise be written again by hand.

:func:`retried` is the loop the clients' requests run in: the same decisions, with the
first attempt made before any loop is built (most requests need no second).
"""

from __future__ import annotations

import email.utils
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar

import httpx
import tenacity

from connectors.http.breaker import CircuitBreaker

log = logging.getLogger("shopsync.http")

T = TypeVar("T")

RETRY_STATUSES = frozenset({408, 429, 500, 502, 503, 504})
#: answers that say the request was not processed, so even a non-idempotent one may be resent
NOT_PROCESSED_STATUSES = frozenset({429, 503})


@dataclass(frozen=True)
class RetryPolicy:
    """How hard to try. The defaults beat the official client's (3 retries, 1 s doubling to
    10 s, 0.5 s jitter, no Retry-After) on patience while bounding the total time."""

    max_attempts: int = 6
    initial_backoff: float = 0.5
    max_backoff: float = 10.0
    jitter: float = 0.5
    max_total: float = 120.0
    max_retry_after: float = 60.0
    #: how a wait is spent (None: asleep); tests pass one that records the waits instead
    sleep: Callable[[float], Awaitable[None]] | None = field(default=None, compare=False,
                                                              repr=False)
    #: what a request's first attempt is timed from (``retried``): tenacity's own clock,
    #: ``time.monotonic``; tests pass one reading earlier, to age an attempt without waiting
    clock: Callable[[], float] = field(default=time.monotonic, compare=False, repr=False)

    @classmethod
    def none(cls) -> RetryPolicy:
        return cls(max_attempts=1)


class Throttled(Exception):
    """Not processed for want of the server's rate budget; the caller's pacing knows the wait."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        super().__init__(f"{response.request.method} {response.request.url.path} was throttled")


class TransientHTTPError(Exception):
    """A retryable answer (408, 429, 5xx); carries what the caller needs once retries run out."""

    def __init__(self, response: httpx.Response) -> None:
        self.response = response
        self.status_code = response.status_code
        self.retry_after = retry_after_seconds(response)
        super().__init__(f"{response.request.method} {response.request.url.path} answered"
                         f" {response.status_code}")


def retry_after_seconds(response: httpx.Response, now: float | None = None) -> float | None:
    """``Retry-After`` as seconds to wait: delta-seconds or an HTTP date; None when absent."""
    value = response.headers.get("retry-after")
    if value is None:
        return None
    value = value.strip()
    if value.isdigit():
        return float(value)
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _retryable(idempotent: bool) -> tenacity.retry_base:
    def check(exc: BaseException) -> bool:
        if isinstance(exc, Throttled):
            return True
        if isinstance(exc, TransientHTTPError):
            return idempotent or exc.status_code in NOT_PROCESSED_STATUSES
        if isinstance(exc, httpx.ConnectError | httpx.ConnectTimeout | httpx.PoolTimeout):
            return True
        return idempotent and isinstance(exc, httpx.TransportError)

    return tenacity.retry_if_exception(check)


class _RetryAfterOrBackoff(tenacity.wait.wait_base):
    """The server's Retry-After when it gave one (capped), else jittered exponential backoff."""

    def __init__(self, policy: RetryPolicy) -> None:
        self._policy = policy
        self._backoff = tenacity.wait_exponential_jitter(
            multiplier=policy.initial_backoff, max=policy.max_backoff, jitter=policy.jitter
        )

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        if isinstance(exc, Throttled):
            return 0.0  # the caller's pacing waits before the next attempt
        if isinstance(exc, TransientHTTPError) and exc.retry_after is not None:
            return min(exc.retry_after, self._policy.max_retry_after)
        return float(self._backoff(retry_state))


class _PolicyBounds(tenacity.stop.stop_base):
    """``max_attempts`` and ``max_total``, counted from the last :class:`Throttled` answer
    (a throttled attempt is a wait, not a failure). One per request."""

    def __init__(self, policy: RetryPolicy) -> None:
        self._policy = policy
        self._after_attempt = 0
        self._after_seconds = 0.0

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        outcome = retry_state.outcome
        spent = retry_state.seconds_since_start or 0.0
        if outcome is not None and isinstance(outcome.exception(), Throttled):
            self._after_attempt, self._after_seconds = retry_state.attempt_number, spent
            return False
        attempts = retry_state.attempt_number - self._after_attempt
        upcoming = retry_state.upcoming_sleep or 0.0
        return (attempts >= self._policy.max_attempts
                or spent - self._after_seconds + upcoming >= self._policy.max_total)


class _NoLaterThanTheBreaker(tenacity.wait.wait_base):
    """The wait, cut short so that the attempt after it comes when the breaker would open."""

    def __init__(self, wait: tenacity.wait.wait_base, breaker: CircuitBreaker) -> None:
        self._wait = wait
        self._breaker = breaker

    def __call__(self, retry_state: tenacity.RetryCallState) -> float:
        return min(float(self._wait(retry_state)), self._breaker.seconds_left())


class _UntilTheBreakerDecides(tenacity.stop.stop_base):
    """The policy's stop, unless nothing has answered since this request began failing:
    then the breaker's stretch, not the policy, bounds the request. One per request."""

    def __init__(self, stop: tenacity.stop.stop_base, breaker: CircuitBreaker) -> None:
        self._stop = stop
        self._breaker = breaker
        self._streak: int | None = None

    def __call__(self, retry_state: tenacity.RetryCallState) -> bool:
        breaker = self._breaker
        if breaker.failing_since is not None and not breaker.is_open:
            if self._streak is None:
                self._streak = breaker.streak
            if breaker.streak == self._streak:
                return False
        return bool(self._stop(retry_state))


def _retry_logger(level: int) -> Callable[[tenacity.RetryCallState], None]:
    def log_retry(retry_state: tenacity.RetryCallState) -> None:
        outcome = retry_state.outcome
        exc = outcome.exception() if outcome is not None else None
        wait = retry_state.next_action.sleep if retry_state.next_action else 0.0
        log.log(
            logging.DEBUG if isinstance(exc, Throttled) else level,
            "retrying after %s in %.2fs (attempt %d)",
            exc if isinstance(exc, TransientHTTPError) else type(exc).__name__,
            wait,
            retry_state.attempt_number + 1,
        )

    return log_retry


def async_retrying(
    policy: RetryPolicy,
    *,
    idempotent: bool = True,
    breaker: CircuitBreaker | None = None,
    **overrides: Any,
) -> tenacity.AsyncRetrying:
    """A tenacity loop for one request under ``policy``; the last error is re-raised.

    ``breaker``: the run's circuit breaker (the caller tells it every attempt's result and
    raises its ``CircuitOpenError``, which is never retried)."""
    wait: tenacity.wait.wait_base = _RetryAfterOrBackoff(policy)
    stop: tenacity.stop.stop_base = _PolicyBounds(policy)
    options: dict[str, Any] = {
        "retry": _retryable(idempotent),
        "wait": wait if breaker is None else _NoLaterThanTheBreaker(wait, breaker),
        "stop": stop if breaker is None else _UntilTheBreakerDecides(stop, breaker),
        "before_sleep": _retry_logger(logging.WARNING if breaker is None else logging.DEBUG),
        "reraise": True,
    }
    if policy.sleep is not None:
        options["sleep"] = policy.sleep
    options.update(overrides)
    return tenacity.AsyncRetrying(**options)


async def retried(
    policy: RetryPolicy,
    attempt: Callable[[], Awaitable[T]],
    *,
    idempotent: bool = True,
    breaker: CircuitBreaker | None = None,
) -> T:
    """``attempt()`` under ``policy``, as in an ``async_retrying`` loop. Most requests are
    answered at once, and building that loop and stepping into it costs about 14 µs a
    request: the first attempt runs outside it, and only when it raises does the loop
    start, with that failure as its first attempt, timed from when that attempt began."""
    started = policy.clock()  # what tenacity times a loop from
    try:
        return await attempt()
    except Exception as exc:  # noqa: BLE001 - the loop decides, as it would have
        failed: Exception | None = exc
    async for trial in async_retrying(policy, idempotent=idempotent, breaker=breaker):
        with trial:
            if failed is not None:
                trial.retry_state.start_time, replayed, failed = started, failed, None
                raise replayed
            return await attempt()
    raise AssertionError("unreachable: the retry loop returns or raises")


def retrying(policy: RetryPolicy, retry_on: Callable[[BaseException], bool]) -> tenacity.Retrying:
    """A blocking loop under ``policy`` that retries what ``retry_on`` accepts (jittered
    exponential backoff, attempts and total time bounded); the last error is re-raised."""
    backoff = tenacity.wait_exponential_jitter(
        multiplier=policy.initial_backoff, max=policy.max_backoff, jitter=policy.jitter)
    return tenacity.Retrying(
        retry=tenacity.retry_if_exception(retry_on),
        wait=backoff,
        stop=tenacity.stop_after_attempt(policy.max_attempts)
        | tenacity.stop_before_delay(policy.max_total),
        reraise=True,
    )
