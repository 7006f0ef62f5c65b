"""Exceptions of the package: one base class, and the built-in kinds users expect."""


class LDPError(Exception):
    """Base class of every error this project raises on purpose."""


class LDPValueError(LDPError, ValueError):
    """A value is out of range or inconsistent (a bad ε, a value outside the domain, ...)."""


class LDPTypeError(LDPError, TypeError):
    """An argument has the wrong type or dtype."""


class IncompatibleError(LDPValueError):
    """Reports or aggregates come from a mechanism with other parameters."""


class PrivacyWarning(UserWarning):
    """The privacy guarantee is weaker than a parameter's name suggests (for example the paper's
    per-bit budget, whose user-level ε is 2l times larger)."""
