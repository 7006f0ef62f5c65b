"""SciPy's subpackages, imported on first use: ``import bfrrce`` and ``import protocols`` stay
fast (scipy.stats and scipy.optimize take most of a second to import) and a caller who never
computes a bound or a p-value never pays for them.

``from protocols.core.lazy import linalg, optimize, special, stats`` gives module stand-ins: the first
attribute read (``stats.norm``) imports the real module and copies its namespace into the
stand-in, so later reads are plain attribute look-ups.
"""

from __future__ import annotations

import importlib
import types


class LazyModule(types.ModuleType):
    """A module imported at its first attribute read.

    Parameters
    ----------
    name : str
        The dotted name of the module it stands for (``"scipy.stats"``).
    """

    def __getattr__(self, name):
        module = importlib.import_module(self.__name__)
        self.__dict__.update(module.__dict__)
        return getattr(module, name)


linalg = LazyModule("scipy.linalg")
optimize = LazyModule("scipy.optimize")
special = LazyModule("scipy.special")
stats = LazyModule("scipy.stats")
