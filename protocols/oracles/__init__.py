"""Frequency oracles, one family per module: ``grr`` (generalized and binary randomized response),
``unary`` (SUE, OUE, UE(p, q)), ``local_hashing`` (BLH, OLH), ``histogram_encoding`` (SHE, THE),
``subset_selection``, ``hadamard``, ``rappor``, ``count_mean_sketch`` (Apple's CMS, HCMS),
``dbitflip`` (Microsoft's dBitFlip)."""
