"""The core every mechanism builds on.

``base`` (the :class:`Mechanism` interface, :class:`FrequencyOracle`, :class:`SupportCounts`,
:class:`Estimate`), ``validation`` (argument checks, shared with :mod:`bfrrce`), ``calibration``
(ε ↔ (p, q) for every mechanism), ``randomness`` (every random draw), ``hashing`` (vectorised
MurmurHash3 and canonical keys), ``perturbation`` (the per-bit randomized-response toolkit: perturb,
count, debias, variance), ``memo`` (memoized randomness), ``registry`` (mechanism classes by name),
``simulation`` (exact simulation through real clients), ``lazy`` (SciPy's subpackages imported
on first use).
"""
