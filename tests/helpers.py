"""Helpers shared by the tests (imported as ``tests.helpers``; no test module imports another)."""

import io
import math

import numpy as np

from bfrrce.cli import main
from protocols import (BLH, GRR, OLH, OUE, SHE, SUE, THE, BasicRAPPOR, HadamardResponse,
                       RandomizedResponse, SubsetSelection, UnaryEncoding)


def run(argv):
    """Run the CLI's ``main(argv)`` with captured output: (exit status, stdout, stderr)."""
    out, err = io.StringIO(), io.StringIO()
    code = main(argv, out=out, err=err)
    return code, out.getvalue(), err.getvalue()


def oracle_factories():
    """Every frequency oracle over a domain of d values, by name."""
    return {
        "GRR": lambda eps, d: GRR(epsilon=eps, d=d),
        "RR": lambda eps, d: RandomizedResponse(epsilon=eps),
        "SUE": lambda eps, d: SUE(epsilon=eps, d=d),
        "BasicRAPPOR": lambda eps, d: BasicRAPPOR(epsilon=eps, d=d),
        "OUE": lambda eps, d: OUE(epsilon=eps, d=d),
        "UE": lambda eps, d: UnaryEncoding(d=d, p=0.7, q=0.2),
        "SHE": lambda eps, d: SHE(epsilon=eps, d=d),
        "THE": lambda eps, d: THE(epsilon=eps, d=d),
        "BLH": lambda eps, d: BLH(epsilon=eps, d=d),
        "OLH": lambda eps, d: OLH(epsilon=eps, d=d),
        "SS": lambda eps, d: SubsetSelection(epsilon=eps, d=d),
        "HR": lambda eps, d: HadamardResponse(epsilon=eps, d=d),
    }


ORACLES = oracle_factories()


def make_oracle(name, eps=1.0, d=8):
    return ORACLES[name](eps, d)


def tolerance_mean(sigma, trials, z=5.0):
    """z standard errors of a mean of `trials` draws with standard deviation sigma."""
    return z * sigma / math.sqrt(trials)


def fixed_values(d, n, rng=0):
    """n values over d with unequal, known frequencies (value 0 most frequent)."""
    weights = np.arange(d, 0, -1, dtype=float)
    return np.random.default_rng(rng).choice(d, size=n, p=weights / weights.sum())


def variance_ratio_tolerance(samples, z=5.0):
    """z standard errors of the sample variance relative to the variance (per column), from the
    sample kurtosis κ: sd(s²)/σ² = sqrt((κ − (T − 3)/(T − 1))/T) (the estimates need not be normal)."""
    x = samples - samples.mean(axis=0)
    T = len(samples)
    kurt = np.mean(x ** 4, axis=0) / np.mean(x ** 2, axis=0) ** 2
    return z * np.sqrt((kurt - (T - 3) / (T - 1)) / T)
