"""Nelder–Mead searches run side by side, their points evaluated together.

:func:`nelder_mead` is ``scipy.optimize.minimize(f, x0, method="Nelder-Mead",
options={"initial_simplex": simplex, "maxfev": evaluations})`` step for step (its defaults:
reflection 1, expansion 2, contraction 1/2, shrink 1/2, ``xatol = fatol = 1e-4``, no bounds),
written as a generator: it yields each point it needs and is sent f there. A caller that drives
many searches therefore evaluates one point of each in one batched call, and each search visits
the points, and returns the value, that scipy's would (``tests/bfrrce/test_nelder_mead.py``).

References
----------
J. A. Nelder, R. Mead, "A simplex method for function minimization", The Computer Journal 7(4),
1965 (scipy's ``_minimize_neldermead`` with ``adaptive=False`` is the form followed here).
"""

from __future__ import annotations

import math
from collections.abc import Generator, Iterable

REFLECT, EXPAND, CONTRACT, SHRINK = 1, 2, 0.5, 0.5
TOLERANCE = 1e-4         # scipy's xatol and fatol


class _Spent(Exception):
    """The search asked for more evaluations than it was given."""


def nelder_mead(simplex: Iterable, evaluations: int) -> Generator[tuple, float, float]:
    """A Nelder–Mead search that yields each point it needs and is sent f there.

    Drive it with ``x = next(search)``, then ``x = search.send(f(x))`` until StopIteration,
    whose ``value`` is the minimum found. The arithmetic is scipy's, on Python floats (the
    same IEEE operations in the same order; a handful of coordinates, so numpy's per-call cost
    would be most of the search's own time); NaN sorts last and propagates to the minimum, as
    in numpy.

    Parameters
    ----------
    simplex : array_like
        The initial simplex, (d + 1) points of d coordinates.
    evaluations : int
        The most evaluations of f (scipy's ``maxfev``).

    Returns
    -------
    Generator
        Yields each point (a tuple of d floats), receives f there; returns the least f of its
        final simplex (scipy's ``fun``).
    """
    sim = [tuple(float(v) for v in vertex) for vertex in simplex]
    dim = len(sim[0])
    fsim = [math.inf] * (dim + 1)
    spent = [0]

    def point(x):
        if spent[0] >= evaluations:
            raise _Spent
        spent[0] += 1
        return (yield x)

    def combine(a, x, b, y):                 # a·x + b·y, coordinate by coordinate
        return tuple(a * u + b * v for u, v in zip(x, y))

    def ordered(sim, fsim):                  # numpy's argsort of fsim (stable here, NaN last)
        order = sorted(range(dim + 1), key=lambda i: (fsim[i] != fsim[i], fsim[i]))
        return [sim[i] for i in order], [fsim[i] for i in order]

    try:
        for j in range(dim + 1):
            fsim[j] = yield from point(sim[j])
    except _Spent:
        pass
    sim, fsim = ordered(sim, fsim)
    while spent[0] < evaluations:
        try:
            if (all(abs(u - v) <= TOLERANCE for vertex in sim[1:] for u, v in zip(vertex, sim[0]))
                    and all(abs(fsim[0] - f) <= TOLERANCE for f in fsim[1:])):
                break
            centre = sim[0]
            for vertex in sim[1:-1]:
                centre = tuple(u + v for u, v in zip(centre, vertex))
            centre = tuple(u / dim for u in centre)
            reflected = combine(1 + REFLECT, centre, -REFLECT, sim[-1])
            f_reflected = yield from point(reflected)
            if f_reflected < fsim[0]:
                expanded = combine(1 + REFLECT * EXPAND, centre, -REFLECT * EXPAND, sim[-1])
                f_expanded = yield from point(expanded)
                sim[-1], fsim[-1] = (expanded, f_expanded) if f_expanded < f_reflected else (reflected, f_reflected)
            elif f_reflected < fsim[-2]:
                sim[-1], fsim[-1] = reflected, f_reflected
            else:
                if f_reflected < fsim[-1]:             # outside contraction
                    contracted = combine(1 + CONTRACT * REFLECT, centre, -CONTRACT * REFLECT, sim[-1])
                    f_contracted = yield from point(contracted)
                    shrink = not f_contracted <= f_reflected
                else:                                   # inside contraction
                    contracted = combine(1 - CONTRACT, centre, CONTRACT, sim[-1])
                    f_contracted = yield from point(contracted)
                    shrink = not f_contracted < fsim[-1]
                if not shrink:
                    sim[-1], fsim[-1] = contracted, f_contracted
                else:
                    for j in range(1, dim + 1):
                        sim[j] = tuple(u + SHRINK * (v - u) for u, v in zip(sim[0], sim[j]))
                        fsim[j] = yield from point(sim[j])
        except _Spent:
            pass
        sim, fsim = ordered(sim, fsim)
    return math.nan if any(f != f for f in fsim) else min(fsim)


def minimize_together(searches: dict, evaluate) -> dict:
    """Run :func:`nelder_mead` generators side by side, one batched evaluation per step.

    Parameters
    ----------
    searches : dict
        Generators of :func:`nelder_mead`, under any keys.
    evaluate : callable
        ``evaluate(keys, points)``: f at one pending point of each running search (in the
        order of ``keys``).

    Returns
    -------
    dict
        Each key's minimum.
    """
    pending = {key: next(search) for key, search in searches.items()}
    found = {}
    while pending:
        keys = list(pending)
        values = evaluate(keys, [pending[key] for key in keys])
        for key, value in zip(keys, values):
            try:
                pending[key] = searches[key].send(float(value))
            except StopIteration as stop:
                found[key] = stop.value
                del pending[key]
    return found
