"""The privacy accountant: sequential composition per user, memoized mechanisms, refusal."""

import math

import numpy as np
import pytest

from protocols import (OLH, RAPPOR, BudgetExceeded, LDPTypeError, LDPValueError, MemoizedDBitFlip,
                       MemoizedOneBitMean, PrivacyAccountant)


def test_one_shot_reports_add_up_and_overspending_is_refused_atomically():
    acct = PrivacyAccountant(total=2.5)
    users = np.arange(1000)
    for _ in range(2):
        np.testing.assert_allclose(acct.spend(users, OLH(epsilon=1.0, d=16)), 1.0)
    acct.spend(users[:10], 0.5)
    with pytest.raises(BudgetExceeded, match="10 of 20 users"):
        acct.spend(users[:20], 0.5)
    np.testing.assert_allclose(acct.spent(users[:20]), [2.5] * 10 + [2.0] * 10)   # nothing charged
    np.testing.assert_allclose(acct.remaining([0, 999, 5000]), [0.0, 0.5, 2.5])


def test_rappor_permanent_response_caps_the_cost_of_one_value():
    """r reports of one value cost min(r·ε₁, ε_∞); a second value costs as much again."""
    mech = RAPPOR(num_bits=16, num_hashes=1, num_cohorts=4)
    acct = PrivacyAccountant(total=10.0)
    spent = [acct.spend([7], mech, keys=["home"])[0] for _ in range(8)]
    r = np.arange(1, 9)
    np.testing.assert_allclose(np.cumsum(spent), np.minimum(r * mech.epsilon, mech.epsilon_permanent))
    acct.spend([7], mech, keys=["work"])
    assert acct.spent([7])[0] == pytest.approx(mech.epsilon_permanent + mech.epsilon)
    # without keys the same mechanism is one-shot: every report costs ε₁
    assert acct.cost([7], mech)[0] == pytest.approx(mech.epsilon)


def test_memoized_telemetry_costs_epsilon_once_per_key():
    flip = MemoizedDBitFlip(epsilon=1.0, d=8, num_bits=2)
    mean = MemoizedOneBitMean(epsilon=0.5, high=60.0, s=6)
    acct = PrivacyAccountant(total=3.0)
    users = np.arange(4)
    secrets = np.arange(4, dtype=np.uint64) + 11
    minutes = np.array([5.0, 12.0, 30.0, 59.0])
    for _ in range(100):                                       # 100 daily collections, stable users
        acct.spend(users, flip, keys=flip.memo_keys(users % 8))
        acct.spend(users, mean, keys=mean.memo_keys(minutes, secrets))
    np.testing.assert_allclose(acct.spent(users), 1.5)
    acct.spend(users, flip, keys=(users + 1) % 8)               # every bucket changes once
    np.testing.assert_allclose(acct.spent(users), 2.5)
    # a different mechanism instance (other parameters) has its own memo
    assert acct.cost([0], MemoizedDBitFlip(epsilon=1.0, d=8, num_bits=3), keys=[0])[0] == 1.0


def test_validation():
    acct = PrivacyAccountant(total=1.0)
    with pytest.raises(LDPValueError, match="distinct"):
        acct.spend([1, 1], 0.1)
    with pytest.raises(LDPTypeError, match="epsilon_permanent"):
        acct.spend([1], OLH(epsilon=0.1, d=4), keys=[3])
    with pytest.raises(LDPValueError, match="one memo key per user"):
        acct.spend([1, 2], RAPPOR(), keys=["a"])
    with pytest.raises(LDPTypeError):
        acct.spend([0.5], 0.1)
    with pytest.raises(LDPValueError):
        PrivacyAccountant(total=0)
    with pytest.raises(LDPValueError):
        acct.spend([1], -0.1)


def test_worked_example_of_docs_accountant():
    """The example of docs/accountant.md, with its printed numbers."""
    rappor = RAPPOR(num_bits=16, num_hashes=1, num_cohorts=4)      # ε₁ = 0.537, ε_∞ = 2 ln 3
    acct = PrivacyAccountant(total=4.0)
    users = np.array([1, 2])
    for day in range(1, 31):
        values = np.array(["home", "home" if day < 15 else "work"])
        ok = acct.cost(users, rappor, keys=values) <= acct.remaining(users)
        acct.spend(users[ok], rappor, keys=values[ok])
        if day == 18:
            assert ok.tolist() == [True, False]
    np.testing.assert_allclose(acct.spent(users), [2 * math.log(3), 2 * math.log(3) + 3 * rappor.epsilon])
    assert acct.spent(users)[1] == pytest.approx(3.809, abs=5e-4)
    with pytest.raises(BudgetExceeded):
        acct.spend(users, OLH(epsilon=1.0, d=64))
    acct.spend(users[:1], OLH(epsilon=1.0, d=64))
    np.testing.assert_allclose(acct.remaining(users), [4 - 1 - 2 * math.log(3), 4 - 3.80865], atol=1e-5)


def test_ledger_round_trips_through_json():
    import json

    rappor = RAPPOR(num_bits=16, num_hashes=1, num_cohorts=4)
    acct = PrivacyAccountant(total=5.0)
    assert PrivacyAccountant.from_dict(acct.to_dict()).remaining([1])[0] == 5.0
    acct.spend([-3, 8], rappor, keys=["a", "b"])
    acct.spend([8, 9], MemoizedDBitFlip(epsilon=1.0, d=8, num_bits=2), keys=[2, 2])
    acct.spend([9], 0.25)
    again = PrivacyAccountant.from_dict(json.loads(json.dumps(acct.to_dict())))
    users = np.array([-3, 8, 9, 10])
    np.testing.assert_array_equal(again.spent(users), acct.spent(users))
    for mech, keys in ((rappor, ["a", "a", "b", "a"]), (MemoizedDBitFlip(epsilon=1.0, d=8, num_bits=2), [2, 2, 2, 3])):
        np.testing.assert_array_equal(again.cost(users, mech, keys=keys), acct.cost(users, mech, keys=keys))
