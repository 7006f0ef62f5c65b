"""The registry of mechanism classes: rebuild a mechanism from its class name and parameters.

Every concrete subclass of :class:`protocols.core.base.Mechanism` registers itself when its class
is created (``Mechanism.__init_subclass__``), so readers of saved state (the accountant's
``from_dict``, the aggregate file format of :mod:`bfrrce.io.formats`) look classes up here instead
of importing the package inside a function. Names starting with ``_`` (intermediate bases) are
not registered.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from protocols.errors import LDPValueError

_CLASSES: dict[str, type] = {}


def register(cls: type) -> type:
    """Record ``cls`` under its class name (called by ``Mechanism.__init_subclass__``).

    Parameters
    ----------
    cls : type
        A mechanism class.

    Returns
    -------
    type
        ``cls`` itself.

    Notes
    -----
    A later class of the same name replaces the earlier one (a reloaded module, a subclass
    defined in a test); the package's own classes have distinct names.
    """
    if not cls.__name__.startswith("_"):
        _CLASSES[cls.__name__] = cls
    return cls


def mechanism_class(name: str) -> type:
    """The registered mechanism class called ``name``.

    Parameters
    ----------
    name : str
        A class name, as ``type(mechanism).__name__``.

    Returns
    -------
    type

    Raises
    ------
    LDPValueError
        No mechanism of that name.
    """
    try:
        return _CLASSES[name]
    except (KeyError, TypeError):
        raise LDPValueError(f"no mechanism class named {name!r} (known: {sorted(_CLASSES)})") from None


def mechanism_params(mechanism: Any) -> dict[str, Any]:
    """The constructor keyword arguments of a dataclass mechanism: ``type(m)(**params) == m``.

    Parameters
    ----------
    mechanism : Mechanism
        A dataclass mechanism.

    Returns
    -------
    dict
        {field name: value} of the fields ``__init__`` takes.
    """
    return {f.name: getattr(mechanism, f.name) for f in dataclasses.fields(mechanism) if f.init}


def mechanism_from_params(name: str, params: dict[str, Any]) -> Any:
    """Rebuild a mechanism from :func:`mechanism_params` and its class name.

    Parameters
    ----------
    name : str
        The class name.
    params : dict
        Its constructor keyword arguments.

    Returns
    -------
    Mechanism

    Raises
    ------
    LDPValueError
        Unknown class name; the class's own errors for parameters it refuses.
    """
    return mechanism_class(name)(**params)
