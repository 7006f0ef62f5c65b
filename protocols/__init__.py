"""LDP frequency oracles, consistency post-processing and mean estimation, batch-vectorised.

Every oracle is an immutable object built with keyword arguments::

    from protocols import OLH
    mech = OLH(epsilon=1.0, d=1024)
    reports = mech.privatize(values)          # clients (CSPRNG keyed by the OS by default)
    agg = mech.aggregate(reports)             # server: mergeable SupportCounts
    counts = mech.estimate(agg)               # unbiased counts for the d values
    mech.variance(n)                          # analytic variance of one count
"""

from .audit import AuditResult, audit_mechanism, empirical_epsilon, exact_epsilon
from .base import Estimate, FrequencyOracle, Mechanism, SupportCounts
from .consistency import base_cut, base_pos, norm, norm_cut, norm_mul, norm_sub
from .errors import (FormatError, IncompatibleError, InputError, LDPError, LDPTypeError, LDPValueError,
                     PrivacyWarning)
from .grr import GRR, RandomizedResponse
from .hadamard import HadamardResponse
from .he import SHE, THE
from .lh import BLH, OLH, LocalHashing
from .mean import DuchiMean, LaplaceMean, MeanAggregate, PiecewiseMean
from .rappor import RAPPOR, CandidateEstimates, RapporReports
from .randomness import SystemRandom
from .ss import SubsetSelection
from .ue import OUE, SUE, BasicRAPPOR, UnaryEncoding

DirectEncoding = GRR

__all__ = [
    "BLH", "GRR", "OLH", "OUE", "RAPPOR", "SHE", "SUE", "THE", "AuditResult", "BasicRAPPOR",
    "CandidateEstimates", "DirectEncoding", "DuchiMean", "Estimate", "FormatError", "FrequencyOracle",
    "HadamardResponse", "IncompatibleError", "InputError", "LDPError", "LDPTypeError", "LDPValueError", "LaplaceMean", "LocalHashing",
    "MeanAggregate", "Mechanism", "PiecewiseMean", "PrivacyWarning", "RandomizedResponse", "RapporReports", "SubsetSelection",
    "SupportCounts", "SystemRandom", "UnaryEncoding", "audit_mechanism", "base_cut", "base_pos",
    "empirical_epsilon", "exact_epsilon", "norm", "norm_cut", "norm_mul", "norm_sub",
]
