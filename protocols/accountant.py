"""A per-user privacy budget: sequential composition across mechanisms and collections.

Each user has the same total budget ε_total. A collection charges every participating user:

* a one-shot mechanism (fresh randomness per report): its ε per report (sequential
  composition: k reports at ε_i each are Σ ε_i-LDP);
* a memoized mechanism (RAPPOR with secrets, :class:`protocols.MemoizedOneBitMean`,
  :class:`protocols.MemoizedDBitFlip`), given each user's memo key (RAPPOR: the value;
  1BitMean: the α-rounded grid point; dBitFlip: the bucket): r reports with one key cost
  min(r·ε, ε_permanent) — they are r one-shot reports, and also a post-processing of the one
  memoized response — and distinct keys add up (independent memoized responses).

A collection that would take any user above ε_total is refused as a whole (nothing is charged).

What the sum guarantees, and what it does not (docs/accountant.md): the ε of everything the
reports reveal about the user's values, when compared with histories whose memo keys follow
the same pattern of rounds. Memoization cannot hide *when* a user's key changed: reports that
differ come from different keys (ε = ∞ between a constant history and a changing one; see
tests/protocols/oracles/test_telemetry.py). That is the price of the unbounded-rounds guarantee for stable values.

:meth:`PrivacyAccountant.central_epsilon` adds what a collection means centrally if its reports
pass a trusted shuffler (:mod:`protocols.shuffle`): the ledger stays local (what it charges does
not change), the central (ε, δ) is reported beside it.
"""

from __future__ import annotations

import numbers
from typing import Any

import numpy as np
from numpy.typing import ArrayLike

from protocols.core.validation import check_epsilon
from protocols.core.base import Mechanism
from protocols.errors import LDPTypeError, LDPValueError
from protocols.core.hashing import hash_keys
from protocols.core.registry import mechanism_from_params, mechanism_params
from protocols.shuffle import shuffled_epsilon

_RELATIVE_SLACK = 1e-12         # float sums of ε may exceed the total by rounding only


class BudgetExceeded(LDPValueError):
    """A collection would take some user above the total budget; nothing was charged."""


def _user_ids(users):
    arr = np.asarray(users)
    if arr.dtype == bool or not np.issubdtype(arr.dtype, np.integer) or arr.ndim != 1:
        raise LDPTypeError(f"users must be a 1-d array of integer ids, got {arr.dtype} {arr.shape}")
    arr = arr.astype(np.int64)
    if np.unique(arr).size != arr.size:
        raise LDPValueError("users must be distinct within one collection (one report per user)")
    return arr


def _key_words(keys, n):
    """Memo keys as uint64 words: integers exactly, other keys (str, bytes) by a 64-bit hash."""
    arr = np.asarray(keys)
    if arr.shape != (n,):
        raise LDPValueError(f"need one memo key per user ({n}), got shape {arr.shape}")
    if arr.dtype != bool and np.issubdtype(arr.dtype, np.integer):
        return arr.astype(np.int64).view(np.uint64)
    h = hash_keys(arr, [0x6B657931, 0x6B657932]).astype(np.uint64)
    return (h[:, 0] << np.uint64(32)) | h[:, 1]


def _rows(*columns):
    """Rows of 64-bit columns as sortable 8k-byte records (big-endian: byte order = numeric order
    for the non-negative parts; any total order works for lookups)."""
    words = np.stack([np.asarray(c).astype(">u8", copy=False).view(np.uint8).reshape(-1, 8)
                      for c in columns], axis=1)
    width = 8 * len(columns)
    return np.ascontiguousarray(words.reshape(len(words), width)).view(f"V{width}").ravel()


class _Table:
    """Sorted records → values, looked up and updated a batch at a time (no per-user loop)."""

    def __init__(self, width, dtype):
        self.keys = np.empty(0, dtype=f"V{width}")
        self.values = np.empty(0, dtype=dtype)

    def get(self, rows):
        pos = np.searchsorted(self.keys, rows)
        found = pos < self.keys.size
        found[found] = self.keys[pos[found]] == rows[found]
        out = np.zeros(rows.size, dtype=self.values.dtype)
        out[found] = self.values[pos[found]]
        return out

    def set(self, rows, values):
        pos = np.searchsorted(self.keys, rows)
        found = pos < self.keys.size
        found[found] = self.keys[pos[found]] == rows[found]
        self.values[pos[found]] = values[found]
        keys = np.concatenate([self.keys, rows[~found]])
        order = np.argsort(keys, kind="stable")
        self.keys, self.values = keys[order], np.concatenate([self.values, values[~found]])[order]


class PrivacyAccountant:
    """Per-user ε ledger with a common total; see the module docstring for the rules.

    Parameters
    ----------
    total : float
        ε_total, the budget of every user.

    References
    ----------
    C. Dwork, A. Roth, "The Algorithmic Foundations of Differential Privacy", 2014, Thm 3.16
    (sequential composition); Ú. Erlingsson, V. Pihur, A. Korolova, "RAPPOR", CCS 2014
    (permanent response); B. Ding, J. Kulkarni, S. Yekhanin, NeurIPS 2017 (memoization).

    Examples
    --------
    >>> from protocols import OLH, PrivacyAccountant
    >>> acct = PrivacyAccountant(total=2.0)
    >>> acct.spend([1, 2], OLH(epsilon=1.5, d=8)).tolist()
    [1.5, 1.5]
    >>> acct.remaining([1, 2, 3]).tolist()
    [0.5, 0.5, 2.0]
    """

    def __init__(self, total: float) -> None:
        self.total = check_epsilon(total, "total")
        self._spent = _Table(8, np.float64)
        self._reports = _Table(24, np.int64)          # (user, mechanism, memo key) → reports
        self._mechanisms: list[Mechanism] = []

    def _mechanism_index(self, mechanism):
        for i, known in enumerate(self._mechanisms):
            if type(known) is type(mechanism) and known == mechanism:
                return i
        self._mechanisms.append(mechanism)
        return len(self._mechanisms) - 1

    def _plan(self, users, mechanism, keys):
        users = _user_ids(users)
        if isinstance(mechanism, numbers.Real) and not isinstance(mechanism, bool):
            epsilon, permanent = check_epsilon(mechanism), None
        else:
            epsilon = check_epsilon(getattr(mechanism, "epsilon", None), "mechanism.epsilon")
            permanent = getattr(mechanism, "epsilon_permanent", None)
            if getattr(mechanism, "delta", 0):
                raise LDPValueError(f"{mechanism!r} is (ε, δ)-LDP with δ > 0: the ledger composes pure ε only")
        if keys is None:
            return users, np.full(users.size, epsilon), None
        if permanent is None:
            raise LDPTypeError(f"memo keys given for {mechanism!r}, which has no epsilon_permanent")
        rows = _rows(users, np.full(users.size, self._mechanism_index(mechanism)),
                     _key_words(keys, users.size))
        before = self._reports.get(rows)
        cost = (np.minimum((before + 1) * epsilon, permanent) - np.minimum(before * epsilon, permanent))
        return users, cost, (rows, before + 1)

    def cost(self, users: ArrayLike, mechanism: Mechanism | float, keys: ArrayLike | None = None) -> np.ndarray:
        """ε each user would be charged for one report of ``mechanism`` (nothing is charged).

        Parameters
        ----------
        users : int array
            Distinct user ids of the collection.
        mechanism : mechanism or float
            Anything with ``epsilon`` (and ``epsilon_permanent`` when ``keys`` are given), or an ε.
        keys : array, optional
            Each user's memo key, for a memoized mechanism whose reports replay one response per key.

        Returns
        -------
        numpy.ndarray
            float ε per user: ε for a one-shot report; min((r + 1)ε, ε_permanent) − min(rε,
            ε_permanent) for the (r + 1)-th report with one memo key.

        Raises
        ------
        LDPTypeError
            Users that are not distinct integer ids, or keys for a mechanism without
            ``epsilon_permanent``.
        LDPValueError
            Repeated users, keys of another length, or a bad ε.
        """
        return self._plan(users, mechanism, keys)[1]

    def central_epsilon(self, users: ArrayLike, mechanism: Mechanism | float, delta: float,
                        keys: ArrayLike | None = None, method: str = "numerical") -> float:
        """Central ε of one collection whose reports pass a shuffler (nothing is charged).

        The local ε0 is the largest ε :meth:`cost` would charge a user of the collection; n is
        the number of users (one report each); ε = :func:`protocols.shuffle.shuffled_epsilon`.
        It holds only if the shuffler is trusted not to collude with the analyst and each user
        sends exactly this one report in the shuffled batch (docs/privacy.md, "Shuffling").

        Parameters
        ----------
        users, mechanism, keys
            As :meth:`cost`.
        delta : float
            δ of the central guarantee, in (0, 1).
        method : {"numerical", "closed_form"}
            The bound (:func:`protocols.shuffle.shuffled_epsilon`).

        Returns
        -------
        float
            ε such that the shuffled collection is (ε, δ)-DP; 0 when it costs nobody anything
            (memoized replays).

        Raises
        ------
        LDPValueError
            As :meth:`cost`, and as :func:`protocols.shuffle.shuffled_epsilon`.

        Examples
        --------
        >>> from protocols import GRR, PrivacyAccountant
        >>> acct = PrivacyAccountant(total=8.0)
        >>> round(acct.central_epsilon(range(100_000), GRR(epsilon=4.0, d=2), delta=1e-6), 2)
        0.17
        """
        cost = self.cost(np.asarray(users), mechanism, keys)
        epsilon0 = float(cost.max(initial=0.0))
        return 0.0 if epsilon0 == 0 else shuffled_epsilon(epsilon0, cost.size, delta, method)

    def spend(self, users: ArrayLike, mechanism: Mechanism | float, keys: ArrayLike | None = None) -> np.ndarray:
        """Charge one collection and return the ε charged to each user.

        Parameters
        ----------
        users, mechanism, keys
            As :meth:`cost`.

        Returns
        -------
        numpy.ndarray
            float ε charged per user.

        Raises
        ------
        BudgetExceeded
            If any user would go above ``total``; then nothing is charged to anyone.
        """
        users, cost, memo = self._plan(users, mechanism, keys)
        rows = _rows(users)
        after = self._spent.get(rows) + cost
        over = after > self.total * (1 + _RELATIVE_SLACK)
        if over.any():
            first = np.flatnonzero(over)[0]
            raise BudgetExceeded(
                f"{int(over.sum())} of {users.size} users would exceed ε_total = {self.total}; "
                f"user {users[first]!r} would reach {float(after[first])!r}")
        self._spent.set(rows, after)
        if memo is not None:
            self._reports.set(*memo)
        return cost

    def to_dict(self) -> dict[str, Any]:
        """The ledger as plain lists, ready for JSON.

        Returns
        -------
        dict
            ``{"total", "users", "spent", "mechanisms", "memo"}``; ``mechanisms`` are
            {"class", "params"} of the memoized mechanisms charged, and each ``memo`` entry is
            [user, mechanism index, memo key word, reports].
        """
        users = self._spent.keys.view(">u8").astype(np.uint64).view(np.int64)
        memo = self._reports.keys.view(">u8").reshape(-1, 3).astype(np.uint64)
        return {"total": self.total, "users": users.tolist(), "spent": self._spent.values.tolist(),
                "mechanisms": [{"class": type(m).__name__, "params": mechanism_params(m)}
                               for m in self._mechanisms],
                "memo": [list(row) for row in zip(memo[:, 0].view(np.int64).tolist(), memo[:, 1].tolist(),
                                                   memo[:, 2].tolist(), self._reports.values.tolist())]}

    @classmethod
    def from_dict(cls, state: dict[str, Any]) -> PrivacyAccountant:
        """The accountant saved by :meth:`to_dict`.

        Parameters
        ----------
        state : dict
            What :meth:`to_dict` returned (possibly through JSON).

        Returns
        -------
        PrivacyAccountant
            With its mechanisms rebuilt by class name and parameters (:mod:`protocols.core.registry`).
        """
        acct = cls(state["total"])
        acct._spent.set(_rows(np.asarray(state["users"], dtype=np.int64)),
                        np.asarray(state["spent"], dtype=np.float64))
        acct._mechanisms = [mechanism_from_params(m["class"], m["params"]) for m in state["mechanisms"]]
        users, index, keys, reports = zip(*state["memo"]) if state["memo"] else ([], [], [], [])
        acct._reports.set(_rows(np.array(users, dtype=np.int64), np.array(index, dtype=np.uint64),
                                np.array(keys, dtype=np.uint64)), np.array(reports, dtype=np.int64))
        return acct

    def spent(self, users: ArrayLike) -> np.ndarray:
        """ε spent so far by each user.

        Parameters
        ----------
        users : array_like of int
            Distinct user ids.

        Returns
        -------
        numpy.ndarray
            float ε per user (0 for users never charged).
        """
        return self._spent.get(_rows(_user_ids(users)))

    def remaining(self, users: ArrayLike) -> np.ndarray:
        """ε_total − spent, per user.

        Parameters
        ----------
        users : array_like of int
            Distinct user ids.

        Returns
        -------
        numpy.ndarray
        """
        return self.total - self.spent(users)
