"""Estimation: the number of distinct values from debiased column sums (docs/estimation.md).

* :mod:`.occupancy` — occupied columns against the exact null law, and the collision law;
* :mod:`.moments` — the second moment of the column masses (for the lower bound);
* :mod:`.likelihood` — the estimate of D under about equal frequencies, from every column sum;
* :mod:`.bounds` — lower and upper confidence bounds valid for any frequency distribution;
* :mod:`.design` — :class:`Design` (n, p, q, L, l, unit), :class:`Observed` (column sums under
  it), :class:`Candidates`, :class:`PointEstimate`;
* :mod:`.estimators` — the ``fill``, ``corrected`` and ``paper`` point estimates and
  :func:`estimate_cardinality`, which assembles bounds, estimate and detection curve
  (:func:`estimate_cardinalities`: several methods on the same sums);
* :mod:`.detection` — detection probability and limit, the per-candidate test;
* :mod:`.result` — :class:`CardinalityEstimate`, :class:`Count`;
* :mod:`.extrapolation` — the optional power-law count of the unseen values (not the default,
  not covered by the bounds).
"""

from .detection import (DETECTION_ALPHA, detected_candidates, detection_limit, detection_probability,
                        per_column_threshold)
from .design import Candidates, Design, Observed, PointEstimate
from .estimators import (METHODS, combine, estimate_cardinalities, estimate_cardinality, estimate_corrected,
                          estimate_fill, estimate_paper)
from .result import CardinalityEstimate, Count

__all__ = ["DETECTION_ALPHA", "METHODS", "Candidates", "CardinalityEstimate", "Count", "Design", "Observed",
           "PointEstimate", "combine", "detected_candidates", "detection_limit", "detection_probability",
           "estimate_cardinalities", "estimate_cardinality", "estimate_corrected", "estimate_fill", "estimate_paper",
           "per_column_threshold"]
