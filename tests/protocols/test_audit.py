"""The privacy audit: exact ε for every mechanism, a sampled lower bound, and real defects caught."""

import math
from itertools import combinations, permutations

import numpy as np
import pytest

from bfrrce import BFRRCE
from protocols import (CMS, GRR, HCMS, RAPPOR, SHE, DBitFlip, SubsetSelection, audit_mechanism,
                       empirical_epsilon, exact_epsilon)
from protocols.audit import chernoff_bounds
from protocols.core.perturbation import bit_vector_distribution

from tests.helpers import ORACLES

AUDITED = sorted(set(ORACLES) - {"SHE"})


def test_she_audit_on_its_window_is_exact_and_tight():
    mech = SHE(epsilon=1.3, d=3, step_bits=0)
    assert audit_mechanism(mech).tight


@pytest.mark.parametrize("name", AUDITED)
def test_every_oracle_passes_the_exact_audit(name):
    result = audit_mechanism(ORACLES[name](1.3, 5))
    assert result.ok
    assert result.tight or name == "THE"


@pytest.mark.parametrize("unit", ["value", "item"])
@pytest.mark.parametrize("perturbation", ["symmetric", "optimized"])
def test_bfrrce_passes_the_exact_audit(unit, perturbation):
    mech = BFRRCE(epsilon=1.3, L=6, l=2, unit=unit, perturbation=perturbation)
    if unit == "value":
        assert audit_mechanism(mech, inputs=range(10)).ok
    else:       # neighbouring sets only: a set and the same set plus one item
        pairs = [((), (1,)), ((1,), (1, 2)), ((2,), (1, 2)), ((1, 2), (1, 2, 3))]
        worst = max(exact_epsilon(mech.set_output_distribution, p) for p in pairs)
        assert worst <= mech.epsilon * (1 + 1e-9)


# --- minimal versions of defects found in the libraries users have today (docs/architecture.md) ---------

def leaky_rappor_distribution(mech):
    """A RAPPOR client that never clears a true 1-bit: P[1 | 1] = 1."""
    def distribution(value):
        filt = np.zeros(mech.num_bits, dtype=bool)
        filt[mech.filter_positions([value], [0])[0]] = True
        return bit_vector_distribution(filt, 1.0, mech.q_star)
    return distribution


def test_audit_flags_rappor_that_never_clears_true_bits():
    mech = RAPPOR(num_bits=8, num_hashes=1, num_cohorts=1)
    assert exact_epsilon(leaky_rappor_distribution(mech), range(4)) == math.inf
    ours = exact_epsilon(lambda v: mech.output_distribution(v, 0), range(4))
    assert ours <= mech.epsilon * (1 + 1e-9)


def true_first_subset_distribution(mech):
    """A subset-selection client that lists the true value first when it is included."""
    d, k, e = mech.d, mech.k, math.exp(mech.epsilon)
    z = math.comb(d - 1, k - 1) * e + math.comb(d - 1, k)

    def distribution(value):
        out = {}
        others = [u for u in range(d) if u != value]
        for rest in combinations(others, k - 1):
            for order in permutations(rest):
                out[(value,) + order] = e / z / math.factorial(k - 1)
        for subset in combinations(others, k):
            for order in permutations(subset):
                out[order] = 1 / z / math.factorial(k)
        return out
    return distribution


def test_audit_flags_subset_selection_that_puts_the_true_value_first():
    mech = SubsetSelection(epsilon=1.0, d=5, k=2)
    leaky = exact_epsilon(true_first_subset_distribution(mech), range(5))
    assert leaky > mech.epsilon * 1.2                      # the position leaks the value
    assert audit_mechanism(mech).tight                    # ours reports unordered masks


def test_empirical_bound_is_below_the_claim_and_catches_leaks():
    mech = GRR(epsilon=1.0, d=4)

    def sampler(x, size, rng):
        return mech.privatize(np.full(size, x), rng=rng)

    lb = empirical_epsilon(sampler, 0, 1, samples=200_000, confidence=0.95)
    assert lb <= mech.epsilon                         # a valid lower bound (95%, fixed seed)
    # and a sharp one: the event is one input's own value (p1 = p, p2 = q); with half = 100,000 draws
    # per input, even counts 5 standard deviations off their means give this bound or better
    half = 100_000
    c1 = half * mech.p - 5 * math.sqrt(half * mech.p * (1 - mech.p))
    c2 = half * mech.q + 5 * math.sqrt(half * mech.q * (1 - mech.q))
    worst = math.log(chernoff_bounds(c1, half, 0.025)[0] / chernoff_bounds(c2, half, 0.025)[1])
    assert lb >= worst

    rappor = RAPPOR(num_bits=8, num_hashes=1, num_cohorts=1)
    leaky = leaky_rappor_distribution(rappor)

    def leaky_sampler(x, size, rng):
        outputs = list(leaky(x))
        probs = np.array([leaky(x)[y] for y in outputs])
        return [outputs[i] for i in rng.choice(len(outputs), size=size, p=probs / probs.sum())]

    bit = lambda v: rappor.filter_positions([v], [0])[0, 0]  # noqa: E731
    a = 0
    b = next(v for v in range(1, 50) if bit(v) != bit(a))        # filters differ in 2 bits
    assert empirical_epsilon(leaky_sampler, a, b, samples=200_000) > rappor.epsilon


def test_chernoff_bounds_cover():
    rng = np.random.default_rng(0)
    misses = 0
    for _ in range(2000):
        count = rng.binomial(500, 0.2)
        lo, hi = chernoff_bounds(count, 500, 0.025)
        misses += not lo <= 0.2 <= hi
    assert misses / 2000 <= 0.05


@pytest.mark.parametrize("mech", [CMS(epsilon=1.3, d=5, k=2, m=4, seed=2), HCMS(epsilon=1.3, d=5, k=2, m=4, seed=2),
                                  DBitFlip(epsilon=1.3, d=5, num_bits=2)], ids=repr)
def test_deployed_mechanisms_pass_the_exact_audit(mech):
    """Apple's sketches and Microsoft's dBitFlip (tests/protocols/oracles/test_count_mean_sketch.py and tests/protocols/oracles/test_telemetry.py
    audit more parameters, OneBitMean and the many-round views of the memoized forms)."""
    result = audit_mechanism(mech)
    assert result.tight
