"""Estimation: the number of distinct values from debiased column sums (docs/estimation.md).

* :mod:`.estimators` — the ``fill``, ``corrected`` and ``paper`` estimators, one keyword signature;
* :mod:`.detection` — detection probability and limit, the per-candidate test;
* :mod:`.result` — :class:`CardinalityEstimate`.
"""

from .detection import (DETECTION_ALPHA, detected_candidates, detection_limit, detection_probability,
                        per_column_threshold)
from .estimators import (ESTIMATORS, STOREY_BELOW, estimate_corrected, estimate_fill,
                         estimate_paper, fourier_psi, null_proportion, storey_null_proportion)
from .result import CardinalityEstimate

__all__ = ["DETECTION_ALPHA", "ESTIMATORS", "STOREY_BELOW", "CardinalityEstimate",
           "detected_candidates", "detection_limit", "detection_probability", "estimate_corrected",
           "estimate_fill", "estimate_paper", "fourier_psi", "null_proportion",
           "per_column_threshold", "storey_null_proportion"]
