"""Values as the source wrote them: JSON whose integers stay whole, and text whose bytes
the source's encoding could not decode, found and named rather than replaced.

orjson reads an integer literal past 64 bits as a float, so that order
``123456789012345678901`` would become ``123456789012345680000`` — and its neighbour the
same number. A document holding a run of 19 or more digits (the shortest integer orjson
cannot hold) is therefore read with the standard library, which keeps integers whole; the
rest, nearly everything, with orjson. Neither accepts NaN or Infinity, nor a number too
large for a float: those are not numbers a shop meant.

Text is decoded with ``surrogateescape``: each byte the encoding cannot decode becomes a
lone surrogate, which no valid text contains, so a reader can tell the row that holds one
and say which bytes they were, instead of a silent ``\ufffd``.
"""

from __future__ import annotations

import json
import math
import re
from typing import Any

import orjson

#: every digit as "0", so that a run of 19 digits is found by ``bytes.find`` (a regex takes
#: ~40 times as long on a page of records)
_DIGITS_AS_ZERO = bytes.maketrans(b"123456789", b"000000000")
_NINETEEN_DIGITS = b"0" * 19
_ESCAPED = re.compile("[\udc80-\udcff]+")


def _finite(text: str) -> float:
    number = float(text)
    if not math.isfinite(number):
        raise ValueError(f"number {text[:40]} is too large for a float")
    return number


def _constant(name: str) -> Any:
    raise ValueError(f"{name} is not a JSON number")


def loads(raw: bytes | str) -> Any:
    """A JSON document with every integer exact; raises ``orjson.JSONDecodeError`` (a
    ``ValueError``) for anything that is not JSON, as orjson alone would."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    if data.translate(_DIGITS_AS_ZERO).find(_NINETEEN_DIGITS) < 0:
        return orjson.loads(raw)
    try:
        return json.loads(data.decode("utf-8"), parse_float=_finite, parse_constant=_constant)
    except (ValueError, RecursionError) as exc:  # JSONDecodeError, UnicodeDecodeError too
        raise orjson.JSONDecodeError(str(exc), data.decode("utf-8", "replace"), 0) from None


def undecodable(text: str) -> bytes | None:
    """The bytes that did not decode in ``text`` read with ``surrogateescape`` (None when
    every byte did)."""
    if text.isascii():  # escaped bytes are lone surrogates: never ASCII (most text, at once)
        return None
    found = _ESCAPED.findall(text)
    if not found:
        return None
    return "".join(found).encode("utf-8", "surrogateescape")


def escape_undecodable(text: str) -> str:
    """``text`` with each undecodable byte shown as ``\\xNN``: safe to store and to show."""
    return _ESCAPED.sub(lambda m: m.group().encode("utf-8", "surrogateescape")
                        .decode("latin-1").encode("unicode_escape").decode("ascii"), text)


def describe_undecodable(found: bytes, encoding: str) -> str:
    """A reason naming the first undecodable bytes (a few; never the whole text)."""
    shown = "".join(f"\\x{b:02x}" for b in found[:8]) + ("…" if len(found) > 8 else "")
    return f"bytes that are not valid {encoding} ({shown})"
