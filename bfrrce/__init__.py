"""BFRRCE: counting distinct values under local differential privacy.

    from bfrrce import BFRRCE
    mech = BFRRCE(epsilon=2.0, L=1024, l=1)
    reports = mech.privatize(values)            # each client, OS CSPRNG
    agg = mech.aggregate(reports)               # server: ColumnSums, O(L) memory
    print(mech.estimate(agg))                   # value, stderr, CI, detection limit
"""

from .aggregate import ColumnSums, Debiased
from .bloom import BloomFilter
from .estimate import CardinalityEstimate
from .perturb import PrivacyWarning
from .protocol import BFRRCE, estimate_distinct
from .advice import suggest_parameters

__all__ = ["BFRRCE", "BloomFilter", "CardinalityEstimate", "ColumnSums", "Debiased",
           "PrivacyWarning", "estimate_distinct", "suggest_parameters"]
__version__ = "0.1.0"
