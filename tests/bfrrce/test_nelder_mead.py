"""Nelder–Mead as a generator (bfrrce.nelder_mead): scipy's search step for step."""

import math

import numpy as np
import pytest
from scipy import optimize

from bfrrce.nelder_mead import minimize_together, nelder_mead


def rosenbrock(x):
    return float(np.sum(100.0 * (x[1:] - x[:-1] ** 2) ** 2 + (1 - x[:-1]) ** 2)) if x.size > 1 else float((x[0] - 0.3) ** 2)


def bumpy(x):
    return float(np.sum(np.cos(3 * x) + 0.1 * x ** 2))


def flat(x):
    return float(np.round(x[0]))        # ties: the sort's order decides


def holed(x):
    return math.nan if x[0] > 0.6 else float(np.sum((x - 0.8) ** 2))     # NaN sorts last, as in numpy


def drive(search, f):
    """Run one generator on f (at each point as an array, as scipy passes it): (points it
    asked for, the value it returned)."""
    asked = []
    try:
        x = next(search)
        while True:
            asked.append(np.array(x))
            x = search.send(f(asked[-1]))
    except StopIteration as stop:
        return asked, stop.value


@pytest.mark.parametrize("f", [rosenbrock, bumpy, flat, holed])
@pytest.mark.parametrize("simplex", [[[0.2], [0.25]], [[-1.2, 1.0], [-1.15, 1.0], [-1.2, 1.3]],
                                     [[0.9, 0.1], [0.85, 0.1], [0.9, 0.4]]])
@pytest.mark.parametrize("evaluations", [1, 2, 3, 4, 7, 30, 400])
def test_steps_are_scipys(f, simplex, evaluations):
    """Every point asked for, in order, and the value returned equal scipy.optimize.minimize's
    (method="Nelder-Mead", the same initial simplex and maxfev) to the last bit: from budgets
    spent inside the first simplex, inside an expansion or a shrink, to convergence."""
    seen = []

    def recorded(x):
        seen.append(np.array(x, copy=True))
        return f(x)
    ref = optimize.minimize(recorded, simplex[0], method="Nelder-Mead",
                            options={"initial_simplex": simplex, "maxfev": evaluations})
    asked, value = drive(nelder_mead(simplex, evaluations), f)
    assert len(asked) == len(seen) <= evaluations
    assert all(np.array_equal(a, b) for a, b in zip(asked, seen))
    assert value == ref.fun or (math.isnan(value) and math.isnan(ref.fun))


def test_searches_side_by_side_are_the_searches_alone():
    """minimize_together evaluates one point of each running search per call (batches shrink as
    searches end) and returns what each search returns alone."""
    starts = {"a": [[-1.2, 1.0], [-1.15, 1.0], [-1.2, 1.3]], "b": [[0.2], [0.25]], 3: [[2.0, 2.0], [2.1, 2.0], [2.0, 2.3]]}
    batches = []

    def evaluate(keys, points):
        batches.append(len(keys))
        return [(rosenbrock if key != 3 else bumpy)(np.array(x)) for key, x in zip(keys, points)]
    found = minimize_together({key: nelder_mead(s, 40) for key, s in starts.items()}, evaluate)
    for key, simplex in starts.items():
        assert found[key] == drive(nelder_mead(simplex, 40), rosenbrock if key != 3 else bumpy)[1]
    assert batches[0] == 3 and batches == sorted(batches, reverse=True) and sum(batches) <= 3 * 40
