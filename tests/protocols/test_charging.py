"""Mechanisms charge the accountant before producing reports (issue 23, item 11)."""

import numpy as np
import pytest

from bfrrce import BFRRCE
from protocols import GRR, LDPTypeError, MemoizedOneBitMean, RAPPOR
from protocols.accountant import BudgetExceeded, PrivacyAccountant


def test_one_shot_mechanisms_charge_and_refuse_over_budget():
    acct = PrivacyAccountant(total=2.5)
    users = np.arange(5)
    for mech in (GRR(epsilon=1.0, d=4), BFRRCE(epsilon=1.0, L=64)):
        values = np.arange(5) % 4
        reports = mech.privatize(values, accountant=acct, users=users)
        assert len(reports) == 5
    np.testing.assert_allclose(acct.spent(users), 2.0)
    with pytest.raises(BudgetExceeded):
        GRR(epsilon=1.0, d=4).privatize(np.arange(5) % 4, accountant=acct, users=users)
    np.testing.assert_allclose(acct.spent(users), 2.0)              # refused: nothing charged


def test_memoized_mechanisms_are_charged_once_per_memo_key():
    acct = PrivacyAccountant(total=1.5)
    mech = MemoizedOneBitMean(epsilon=1.0, high=1.0, s=4)
    secrets = np.arange(3, dtype=np.uint64) + 99
    for _ in range(4):                                            # one value, one key: charged once
        mech.privatize(np.full(3, 0.5), secrets=secrets, accountant=acct, users=[7, 8, 9])
    np.testing.assert_allclose(acct.spent([7, 8, 9]), 1.0)
    rappor = RAPPOR(num_bits=16, num_hashes=2, num_cohorts=2)
    acct = PrivacyAccountant(total=rappor.epsilon_permanent * 1.01)
    for _ in range(5):                                            # 5 one-shot ε exceed ε_permanent
        rappor.privatize(["a", "b"], secrets=[1, 2], accountant=acct, users=[1, 2])
    np.testing.assert_allclose(acct.spent([1, 2]), rappor.epsilon_permanent)
    with pytest.raises(BudgetExceeded):
        rappor.privatize(["c", "b"], secrets=[1, 2], accountant=acct, users=[1, 2])


def test_accountant_needs_user_ids():
    with pytest.raises(LDPTypeError, match="users="):
        GRR(epsilon=1.0, d=4).privatize([0, 1], accountant=PrivacyAccountant(total=1.0))
    with pytest.raises(LDPTypeError):
        GRR(epsilon=1.0, d=4).privatize([0, 1], users=[0, 1])
