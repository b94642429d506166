"""Webservice errors: ``{"errors":[{"code":N,"message":"…"}]}`` (or the XML equivalent),
with the HTTP status PrestaShop sets for each code (WebserviceRequest::setError)."""

from __future__ import annotations

from collections.abc import Sequence

from sandbox.shops.web import ShopError

REALM = ('Basic realm="Welcome to PrestaShop Webservice, please enter the authentication key'
         ' as the login. No password required."')


class PSError(ShopError):
    def __init__(self, status: int, code: int, message: str,
                 headers: dict[str, str] | None = None) -> None:
        super().__init__(status, message, headers, f"{status} [{code}] {message}")
        self.code = code


def _levenshtein(a: str, b: str) -> int:
    previous = list(range(len(b) + 1))
    for i, ca in enumerate(a, 1):
        current = [i]
        for j, cb in enumerate(b, 1):
            current.append(min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (ca != cb)))
        previous = current
    return previous[-1]


def did_you_mean(status: int, code: int, label: str, wrong: str, available: Sequence[str]) -> PSError:
    """setErrorDidYouMean: the closest value by Levenshtein distance, then the full list."""
    closest = min(available, key=lambda word: _levenshtein(wrong, word)) if available else ""
    full = (' The full list is: "' + '", "'.join(available) + '"') if len(available) > 1 else ""
    return PSError(status, code, f'{label}. Did you mean: "{closest}"?{full}')


def auth_error(code: int) -> PSError:
    message = {
        16: "Please enter the authentication key as the login. No password required",
        17: "Authentication key is empty",
        18: "Invalid authentication key format",
        20: "Authentification key is not active",  # sic
        21: "No permission for this authentication key",
    }[code]
    return PSError(401, code, message, {"WWW-Authenticate": REALM})


def webservice_disabled() -> PSError:
    return PSError(503, 22, "The PrestaShop webservice is disabled. Please activate it in the"
                            " PrestaShop Back Office")
