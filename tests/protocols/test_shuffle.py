"""Shuffle amplification (protocols.shuffle): FMT21's bounds against the exact (ε, δ) of shuffled
binary randomized response, their validity conditions, and the exact-δ audit helper."""

import math

import pytest

from protocols import GRR, LDPValueError, RandomizedResponse, exact_delta
from protocols.shuffle import (closed_form_limit, exact_shuffled_rr_delta, exact_shuffled_rr_epsilon,
                               largest_local_epsilon, shuffled_delta, shuffled_epsilon)

SLACK = 1e-8        # both searches stop within 1e-9·ε0 of their answer


@pytest.mark.parametrize("n", [10, 100, 1000, 10_000])
@pytest.mark.parametrize("epsilon0", [0.25, 1.0, 3.0, 6.0])
@pytest.mark.parametrize("delta", [1e-3, 1e-7])
def test_bounds_never_below_exact_shuffled_rr(n, epsilon0, delta):
    # the exact ε of one neighbouring pair (the other users hold 0, or half hold 1) is a lower
    # bound on the worst case, so an upper bound below it would be wrong
    exact = max(exact_shuffled_rr_epsilon(epsilon0, n, delta, ones=m) for m in (0, n // 2))
    numerical = shuffled_epsilon(epsilon0, n, delta)
    assert exact <= numerical + SLACK <= epsilon0 + 2 * SLACK
    if epsilon0 <= closed_form_limit(n, delta):
        closed = shuffled_epsilon(epsilon0, n, delta, method="closed_form")
        assert numerical <= closed + SLACK and exact <= closed + SLACK


@pytest.mark.parametrize("n", [8, 40])
@pytest.mark.parametrize("epsilon0", [0.5, 2.0])
def test_numerical_bound_above_worst_case_exact(n, epsilon0):
    # small n: the exact ε is maximised over every dataset of the other users
    for delta in (1e-2, 1e-5):
        assert exact_shuffled_rr_epsilon(epsilon0, n, delta, ones=None) <= shuffled_epsilon(epsilon0, n, delta) + SLACK


def test_delta_curve_decreasing_and_above_exact():
    eps = [0.0, 0.05, 0.1, 0.2, 0.4, 0.8, 1.0]
    bound = [shuffled_delta(1.0, 2000, e) for e in eps]
    exact = [exact_shuffled_rr_delta(1.0, 2000, e) for e in eps]
    assert all(a >= b for a, b in zip(bound, bound[1:]))
    assert all(b >= x - 1e-12 for b, x in zip(bound, exact))
    assert bound[-1] == 0.0 and exact[-1] <= 1e-12          # ε = ε0: pure, δ = 0


def test_closed_form_refuses_outside_its_condition():
    limit = closed_form_limit(10_000, 1e-6)
    assert math.isclose(limit, math.log(10_000 / (16 * math.log(2e6))))
    shuffled_epsilon(limit, 10_000, 1e-6, method="closed_form")
    with pytest.raises(LDPValueError, match=r"epsilon0 <= ln\(n / \(16 ln\(2/delta\)\)\)"):
        shuffled_epsilon(limit + 0.01, 10_000, 1e-6, method="closed_form")
    with pytest.raises(LDPValueError, match="method"):
        shuffled_epsilon(1.0, 100, 1e-6, method="exact")
    with pytest.raises(LDPValueError, match="delta"):
        shuffled_epsilon(1.0, 100, 0.0)


def test_amplification_at_scale():
    # 10^6 users at local ε0 = 4: central ε well below 1 at δ = 1e-8 (the claim)
    central = shuffled_epsilon(4.0, 10**6, 1e-8)
    assert central <= shuffled_epsilon(4.0, 10**6, 1e-8, method="closed_form") < 1.0


def test_largest_local_epsilon_inverts_the_bound():
    eps0 = largest_local_epsilon(0.5, 100_000, 1e-7)
    assert shuffled_epsilon(eps0, 100_000, 1e-7) <= 0.5
    assert shuffled_epsilon(eps0 * 1.001, 100_000, 1e-7) > 0.5
    assert 0.5 <= largest_local_epsilon(0.5, 10, 1e-7) < 0.501     # no amplification to speak of


def test_exact_delta_of_pure_mechanisms():
    rr = RandomizedResponse(epsilon=1.0)
    assert exact_delta(rr.output_distribution, range(2), 1.0) <= 1e-15
    assert math.isclose(exact_delta(rr.output_distribution, range(2), 0.0), rr.p - rr.q)   # total variation
    grr = GRR(epsilon=2.0, d=4)
    assert exact_delta(grr.output_distribution, range(4), 1.0) > 0.0


def test_accountant_reports_central_epsilon_without_charging():
    from protocols import OLH, PrivacyAccountant
    acct = PrivacyAccountant(total=5.0)
    users = list(range(50_000))
    mech = OLH(epsilon=3.0, d=64)
    central = acct.central_epsilon(users, mech, delta=1e-6)
    assert central == shuffled_epsilon(3.0, 50_000, 1e-6) < 3.0
    assert acct.spent([0, 1]).tolist() == [0.0, 0.0]            # the ledger stays local
    acct.spend(users, mech)
    assert acct.remaining([0]).tolist() == [2.0]


def test_bfrrce_estimate_and_cli_report_the_shuffled_guarantee(tmp_path):
    import io

    from bfrrce import BFRRCE
    from bfrrce.cli import main

    mech = BFRRCE(epsilon=4.0, L=64)
    agg = mech.simulate(list(range(30)), counts=[1000] * 30, rng=0)
    est = mech.estimate(agg, shuffled_delta=1e-6)
    assert est.details["shuffled"] == {"n": 30_000, "epsilon0": 4.0, "delta": 1e-6,
                                       "epsilon": shuffled_epsilon(4.0, 30_000, 1e-6)}
    assert "if these 30,000 reports were shuffled: central (ε, δ)" in str(est)
    assert "shuffled" not in mech.estimate(agg).details
    path = tmp_path / "data.csv"
    path.write_text("value\n" + "".join(f"v{i % 7}\n" for i in range(2000)))
    out, err = io.StringIO(), io.StringIO()
    argv = ["estimate", str(path), "--column", "value", "--epsilon", "4", "--seed", "1", "--L", "64"]
    assert main(argv + ["--shuffled", "--delta", "1e-6"], out=out, err=err) == 0, err.getvalue()
    assert "if these 2,000 reports were shuffled" in out.getvalue()
    assert main(argv + ["--shuffled"], out=out, err=err) == 2
    assert "--shuffled and --delta go together" in err.getvalue()


def test_advisor_chooses_local_epsilon_from_a_central_target():
    from bfrrce.advice import suggest_parameters

    s = suggest_parameters(100_000, cardinality_range=(100, 1000), objective="aare", Ls=[1024, 4096],
                           central_epsilon=1.0, delta=1e-6)
    assert s.epsilon == s.shuffled["epsilon0"] == largest_local_epsilon(1.0, 100_000, 1e-6) > 1.0
    assert shuffled_epsilon(s.epsilon, 100_000, 1e-6) <= 1.0
    assert s.shuffled["aare"] <= s.shuffled["aare_unshuffled"]
    assert str(s).startswith("central target (ε, δ) = (1, 1e-06) for 100,000 shuffled reports")
    with pytest.raises(LDPValueError, match="either epsilon"):
        suggest_parameters(1000, 1.0, (1, 10), central_epsilon=1.0, delta=1e-6)
    with pytest.raises(LDPValueError, match="needs delta"):
        suggest_parameters(1000, cardinality_range=(1, 10), central_epsilon=1.0)
