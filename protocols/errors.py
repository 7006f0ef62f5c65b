"""The one error hierarchy of the project (a leaf module: it imports nothing of the project).

::

    LDPError
    ├── LDPValueError (ValueError)   a value out of range or inconsistent
    │   ├── IncompatibleError        reports or aggregates of other parameters
    │   ├── FormatError              bytes that are not a valid file of the expected kind
    │   └── InputError               a user's file that cannot be read as values
    └── LDPTypeError (TypeError)     an argument of the wrong type or dtype

    PrivacyWarning (UserWarning)     a guarantee weaker than a parameter's name suggests

Every message names the offending value.
"""

import os
import sys


class LDPError(Exception):
    """Base class of every error this project raises on purpose."""


class LDPValueError(LDPError, ValueError):
    """A value is out of range or inconsistent (a bad ε, a value outside the domain, ...)."""


class LDPTypeError(LDPError, TypeError):
    """An argument has the wrong type or dtype."""


class IncompatibleError(LDPValueError):
    """Reports or aggregates come from a mechanism with other parameters."""


class FormatError(LDPValueError):
    """Bytes that are not a valid file of the expected kind (magic, version, checksum, ...)."""


class InputError(LDPValueError):
    """A user's file that cannot be read as the requested values (missing, no such column, empty)."""


_PACKAGES = tuple(os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), name) + os.sep
                  for name in ("protocols", "bfrrce"))


def caller_level() -> int:
    """The ``stacklevel`` for ``warnings.warn`` that names the first frame outside this
    project's packages (the user's call), from the function that warns.

    Returns
    -------
    int
        The ``stacklevel`` (2 or more) to pass to ``warnings.warn``.
    """
    frame, level = sys._getframe(2), 2
    while frame is not None and frame.f_code.co_filename.startswith(_PACKAGES):
        frame, level = frame.f_back, level + 1
    return level


class PrivacyWarning(UserWarning):
    """The privacy guarantee is weaker than a parameter's name suggests (for example the paper's
    per-bit budget, whose user-level ε is 2l times larger)."""
