"""Mean estimation of bounded values: ``base`` (the interface and :class:`MeanAggregate`),
``laplace``, ``duchi``, ``piecewise``, ``one_bit`` (Microsoft's 1BitMean, one-shot and memoized)."""
