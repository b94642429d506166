"""A sync that stopped before its end — the destination down, or an interrupt — after keeping
everything durable, and the one message that says so: why, since when, that nothing is lost,
and where the next run resumes.

Nothing is lost because outcomes and cursor are recorded together, chunk by chunk (see
``sync.py``): a chunk cut short records nothing, and its items are read and sent again.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Literal

from connectors.marketing.errors import DestinationDown
from connectors.sources.base import Position
from pipelines.engine.plan import KeyCheckpoint, stands_at

Why = Literal["destination down", "interrupted"]
#: where a stream's next run starts: after a cursor, after the last key a first read in key
#: order recorded, from its beginning (None), or "whole" for a stream read whole every run
Resume = Position | KeyCheckpoint | Literal["whole"] | None


def _resume(stream: str, at: Resume) -> str:
    if at == "whole":
        return f"{stream} read whole"
    if at is None:
        return f"{stream} from its beginning"
    if isinstance(at, KeyCheckpoint):
        return f"{stream} in its {stands_at(at)}"
    return f"{stream} after {stands_at(at)}"


def resume_text(resume: Mapping[str, Resume]) -> str:
    """Where each stream's next run starts reading, in plan order."""
    return "; ".join(_resume(stream, at) for stream, at in resume.items()) or "from the beginning"


class SyncStopped(Exception):
    """A sync of ``source`` stopped early; ``stream`` is the one it was in (if known) and
    ``resume`` where each planned stream's next run starts (None for a backfill, which
    leaves cursors alone)."""

    def __init__(self, why: Why, cause: str, source: str, stream: str | None,
                 resume: Mapping[str, Resume] | None) -> None:
        self.why = why
        self.source = source
        self.stream = stream
        self.resume = dict(resume) if resume is not None else None
        where = f"{source}/{stream}" if stream else source
        then = (f"the next run, which resumes {resume_text(resume)}" if resume is not None
                else "the backfill when run again (it re-reads its whole window)")
        self.message = (
            f"{why}: {cause}.\nThe sync of {where} stopped; nothing is lost: what the"
            " destination accepted is recorded, and what it did not confirm is read and sent"
            f" again by {then}."
        )
        super().__init__(self.message)

    @classmethod
    def destination_down(cls, exc: DestinationDown, source: str, stream: str | None,
                         resume: Mapping[str, Resume] | None) -> SyncStopped:
        return cls("destination down", str(exc), source, stream, resume)

    @classmethod
    def interrupted(cls, source: str,
                    resume: Mapping[str, Resume] | None) -> SyncStopped:
        return cls("interrupted", "Ctrl-C", source, None, resume)
