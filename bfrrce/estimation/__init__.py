"""Estimation: the number of distinct values from debiased column sums (docs/estimation.md).

* :mod:`.occupancy` — occupied columns against the exact null law, and the collision law;
* :mod:`.moments` — the second moment of the column masses (for the lower bound);
* :mod:`.likelihood` — the estimate of D under about equal frequencies, from every column sum;
* :mod:`.bounds` — lower and upper confidence bounds valid for any frequency distribution;
* :mod:`.estimators` — the ``fill``, ``corrected`` and ``paper`` point estimates, one signature,
  and :func:`estimate_cardinality`, which assembles bounds, estimate and detection curve;
* :mod:`.detection` — detection probability and limit, the per-candidate test;
* :mod:`.result` — :class:`CardinalityEstimate`, :class:`Count`.
"""

from .detection import (DETECTION_ALPHA, detected_candidates, detection_limit, detection_probability,
                        per_column_threshold)
from .estimators import ESTIMATORS, combine, estimate_cardinality, estimate_corrected, estimate_fill, estimate_paper
from .result import CardinalityEstimate, Count

__all__ = ["DETECTION_ALPHA", "ESTIMATORS", "CardinalityEstimate", "Count", "combine", "detected_candidates",
           "detection_limit", "detection_probability", "estimate_cardinality", "estimate_corrected",
           "estimate_fill", "estimate_paper", "per_column_threshold"]
