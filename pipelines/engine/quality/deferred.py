"""great-expectations' heavy imports that our suites never use, loaded when first used.

Importing GX registers every core expectation and metric, and a few of those modules import,
at their top, libraries they only call when they compute: ``scipy.stats`` (the KS-test and
KL-divergence metrics) and ``altair`` (the KL expectation's charts). No rule of ours uses
them, yet they are half of the import's CPU: GX and the suites' plans took 1.75 CPU-s on
this machine with them and 0.9 without — seconds the first chunk of a run waits for.

``defer`` puts a stand-in for each in ``sys.modules`` before GX is imported: it carries the
module's spec and file (what import statements and ``inspect`` look at) and imports the real
module the first time anything else of it is asked for, passing that and every later lookup
on to it — so whatever does use them still works, paying the import then.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import threading
import types
from typing import Any

#: imported at the top of GX modules and used only inside their functions
UNUSED_BY_OUR_SUITES = ("scipy.stats", "altair")

#: held to take a stand-in out of sys.modules once (never around an import)
_swap = threading.Lock()


class _Deferred(types.ModuleType):
    """Stands for a module in ``sys.modules`` until one of its attributes is asked for, then
    passes every lookup on to the real module (GX's modules keep a reference to it)."""

    def __getattr__(self, name: str) -> Any:  # only for what the stand-in does not hold
        with _swap:
            if sys.modules.get(self.__name__) is self:
                del sys.modules[self.__name__]
        # once out of sys.modules, the import system imports it once, whoever asks first
        return getattr(importlib.import_module(self.__name__), name)


def defer(names: tuple[str, ...] = UNUSED_BY_OUR_SUITES) -> None:
    """Put a stand-in for each of ``names`` that is installed and not imported yet."""
    for name in names:
        if name in sys.modules:
            continue
        try:
            spec = importlib.util.find_spec(name)
        except ImportError:  # its parent package is missing
            continue
        if spec is None:
            continue
        stand_in = _Deferred(name)
        stand_in.__spec__, stand_in.__loader__ = spec, spec.loader
        stand_in.__package__, stand_in.__file__ = spec.parent, spec.origin
        sys.modules.setdefault(name, stand_in)
