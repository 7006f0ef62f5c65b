"""Memo randomness keyed by the mechanism (issue 23, item 9): two parameterizations fed one
secret give jointly possible outputs, with the ε the accountant charges (ε_1 + ε_2)."""

import itertools
import math

import numpy as np
import pytest

from protocols import MemoizedDBitFlip, MemoizedOneBitMean, RAPPOR
from protocols.core.memo import mechanism_word

N = 40_000


def product_law(a, b, x):
    """The exact joint law of one report of each mechanism when their memos are independent."""
    la, lb = a.history_distribution([x]), b.history_distribution([x])
    return {(ka, kb): pa * pb for (ka, pa), (kb, pb) in itertools.product(la.items(), lb.items())}


def joint_frequencies(a, b, x, reports):
    secrets = np.random.default_rng(11).integers(0, 2 ** 63, N, dtype=np.uint64)
    ra, rb = reports(a, x, secrets), reports(b, x, secrets)
    keys = list(zip(ra, rb))
    counts = {}
    for k in keys:
        counts[k] = counts.get(k, 0) + 1
    return counts


def check_pair(a, b, values, reports, key):
    laws = {x: product_law(a, b, x) for x in values}
    outcomes = set().union(*laws.values())
    worst = max(abs(math.log(laws[x].get(o, 0.0) / laws[y].get(o, 0.0)))
                for x, y in itertools.permutations(values, 2) for o in outcomes)
    assert worst <= a.epsilon + b.epsilon + 1e-9                    # the exact joint ε: ε_1 + ε_2
    for x in values:
        freq = joint_frequencies(a, b, x, reports)
        for o, p in laws[x].items():                                 # the implementation has that law
            got = freq.get(key(o), 0)
            assert abs(got - N * p) <= 5 * math.sqrt(N * p * (1 - p)) + 1, (x, o, got, N * p)


def test_memoized_one_bit_mean_at_two_epsilons():
    a, b = MemoizedOneBitMean(epsilon=1.0, high=1.0, s=2), MemoizedOneBitMean(epsilon=2.0, high=1.0, s=2)
    check_pair(a, b, [0.0, 0.5, 1.0],
               lambda m, x, s: m.privatize(np.full(N, x), secrets=s).tolist(),
               lambda o: (o[0][0], o[1][0]))


def test_memoized_dbitflip_at_two_epsilons():
    a, b = MemoizedDBitFlip(epsilon=1.0, d=2, num_bits=1), MemoizedDBitFlip(epsilon=2.0, d=2, num_bits=1)

    def reports(m, x, secrets):
        r = m.privatize(np.full(N, x), secrets=secrets)
        return [(tuple(b), (tuple(v),)) for b, v in zip(r.buckets.tolist(), r.bits.tolist())]

    def key(o):
        return o
    check_pair(a, b, [0, 1], reports, key)


def test_rappor_permanent_responses_at_two_f_are_independent():
    a, b = RAPPOR(num_bits=8, num_hashes=1, num_cohorts=1, f=0.5), RAPPOR(num_bits=8, num_hashes=1, num_cohorts=1, f=0.25)
    assert mechanism_word(a) != mechanism_word(b)
    secrets = np.random.default_rng(3).integers(0, 2 ** 63, N, dtype=np.uint64)
    values = np.zeros(N, dtype=np.int64)
    pa = a._permanent(values, secrets, a.filter_positions(values, np.zeros(N, dtype=np.int64)))
    pb = b._permanent(values, secrets, b.filter_positions(values, np.zeros(N, dtype=np.int64)))
    unset = ~np.isin(np.arange(8), a.filter_positions([0], [0])[0])
    j = int(np.flatnonzero(unset)[0])                    # a bit the value does not set: P = f/2 each
    both = np.mean(pa[:, j] & pb[:, j])
    expected = 0.25 * 0.125
    assert abs(both - expected) <= 5 * math.sqrt(expected * (1 - expected) / N)


def test_the_word_names_class_and_parameters():
    words = {mechanism_word(MemoizedOneBitMean(epsilon=e, high=1.0, s=s)) for e in (1.0, 2.0) for s in (2, 3)}
    assert len(words) == 4
    assert mechanism_word(MemoizedOneBitMean(epsilon=1.0, high=1.0, s=2)) == \
        mechanism_word(MemoizedOneBitMean(epsilon=1.0, high=1.0, s=2))
    with pytest.raises(AssertionError):
        assert mechanism_word(MemoizedDBitFlip(epsilon=1.0, d=2, num_bits=1)) == \
            mechanism_word(MemoizedDBitFlip(epsilon=1.0, d=3, num_bits=1))
