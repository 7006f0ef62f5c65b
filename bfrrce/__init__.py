"""BFRRCE: counting distinct values under local differential privacy.

    from bfrrce import BFRRCE
    mech = BFRRCE(epsilon=2.0, L=1024, l=1)
    reports = mech.privatize(values)            # each client: ChaCha20 keyed from os.urandom
    agg = mech.aggregate(reports)               # server: ColumnSums, O(L) memory
    print(mech.estimate(agg))                   # value, std_error, interval, detection limit
"""

from protocols.errors import PrivacyWarning

from ._version import __version__
from .advice import suggest_parameters
from .bloom import BloomFilter
from .estimation import CardinalityEstimate
from .mechanism import BFRRCE, estimate_distinct
from .poisoning import cooccurrence_test, screen_concentrated, screen_reports, weight_excess
from .sets import SetSketch
from .sums import ColumnSums, Debiased

__all__ = ["BFRRCE", "BloomFilter", "CardinalityEstimate", "ColumnSums", "Debiased",
           "PrivacyWarning", "SetSketch", "cooccurrence_test", "estimate_distinct", "screen_concentrated",
           "screen_reports", "suggest_parameters", "weight_excess", "__version__"]
