"""LDP frequency oracles, consistency post-processing and mean estimation, batch-vectorised.

Every oracle is an immutable object built with keyword arguments::

    from protocols import OLH
    mech = OLH(epsilon=1.0, d=1024)
    reports = mech.privatize(values)          # clients (CSPRNG keyed by the OS by default)
    agg = mech.aggregate(reports)             # server: mergeable SupportCounts
    counts = mech.estimate(agg)               # unbiased counts for the d values
    mech.variance(n)                          # analytic variance of one count

Also: mean mechanisms (:mod:`.mean`, :mod:`.telemetry`), sketches over any keys
(:mod:`.sketch`), consistency post-processing (:mod:`.consistency`), exact privacy audits
(:mod:`.audit`), a per-user budget across collections (:mod:`.budget`) and the central (ε, δ)
of shuffled reports (:mod:`.shuffle`); multi-dimensional range queries (:mod:`.multidimensional`).
"""

from protocols.audit import AuditResult, audit_mechanism, empirical_epsilon, exact_delta, exact_epsilon, hockey_stick
from protocols.core.base import Estimate, FrequencyOracle, Mechanism, SupportCounts
from protocols.accountant import BudgetExceeded, PrivacyAccountant
from protocols.consistency import base_cut, base_pos, norm, norm_cut, norm_mul, norm_sub
from protocols.errors import (FormatError, IncompatibleError, InputError, LDPError, LDPTypeError, LDPValueError,
                     PrivacyWarning)
from protocols.oracles.grr import GRR, RandomizedResponse
from protocols.oracles.hadamard import HadamardResponse
from protocols.oracles.histogram_encoding import SHE, THE
from protocols.oracles.local_hashing import BLH, OLH, LocalHashing
from protocols.mean.base import MeanAggregate
from protocols.mean.duchi import DuchiMean
from protocols.mean.laplace import LaplaceMean
from protocols.mean.piecewise import PiecewiseMean
from protocols.multidimensional import HIO, HIOReports, LayerCounts, PerAttribute
from protocols.oracles.rappor import RAPPOR, CandidateEstimates, RapporReports
from protocols.core.randomness import SystemRandom
from protocols.shuffle import largest_local_epsilon, shuffled_delta, shuffled_epsilon
from protocols.oracles.count_mean_sketch import CMS, HCMS
from protocols.oracles.subset_selection import SubsetSelection
from protocols.oracles.dbitflip import DBitFlip, MemoizedDBitFlip
from protocols.mean.one_bit import MemoizedOneBitMean, OneBitMean
from protocols.oracles.unary import OUE, SUE, BasicRAPPOR, UnaryEncoding

DirectEncoding = GRR

__all__ = [
    "AuditResult", "BLH", "BasicRAPPOR", "BudgetExceeded", "CMS", "CandidateEstimates", "DBitFlip",
    "DirectEncoding", "DuchiMean", "Estimate", "FormatError", "FrequencyOracle", "GRR", "HCMS",
    "HIO", "HIOReports", "HadamardResponse", "IncompatibleError", "InputError", "LDPError", "LDPTypeError",
    "LDPValueError", "LaplaceMean", "LayerCounts", "LocalHashing", "MeanAggregate", "Mechanism",
    "MemoizedDBitFlip", "MemoizedOneBitMean", "OLH", "OUE", "OneBitMean", "PerAttribute", "PiecewiseMean",
    "PrivacyAccountant", "PrivacyWarning", "RAPPOR", "RandomizedResponse", "RapporReports", "SHE",
    "SUE", "SubsetSelection", "SupportCounts", "SystemRandom", "THE", "UnaryEncoding",
    "audit_mechanism", "base_cut", "base_pos", "empirical_epsilon", "exact_delta", "exact_epsilon",
    "hockey_stick", "largest_local_epsilon", "norm", "norm_cut", "norm_mul", "norm_sub", "shuffled_delta",
    "shuffled_epsilon",
]
