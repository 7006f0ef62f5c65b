"""The number of values under any frequency law: a likelihood over frequency classes (l = 1).

With one hash per value a column holds the values that hash to it. Poissonized, the values of f
users arrive at a column at rate g_f, independently over f, so the column's users are compound
Poisson, T = Σ_f f·Poisson(g_f), and its sum is c | T = Binomial(T, p) + Binomial(n − T, q). The
rates are free (g >= 0) on classes f = 1 … :data:`EXACT_CLASSES` and a geometric grid of ratio
:data:`CLASS_RATIO` up to t_max (a frequency between two classes is read as a mixture of its
neighbours), and a heavy class of more than t_max users; sums at or above a cut that a column of
t_max + 1 users reaches but with probability below 10^-10 form one category, so the heavy columns
need no law beyond "above the cut". The users are known: the classes' mean users per column,
Σ_f f·g_f, is n/L where no sum reaches the cut, and at most n/L less t_max + 1 per heavy value
where some do (the Poisson mean matched to the known total, which de-Poissonizes the model: with
singletons alone it pins D to n), and between what the columns above the cut leave by their
sums and that with t_max of each such column's users light (``light_floor``, ``light_cap``). The
number of values is D = L·λ, λ = Σ_f g_f (heavy included):
the likelihood of every column's sum, maximised over the g, is profiled over λ (each point a fit
at fixed λ, an SLSQP in the coordinates of the rates' information; the crossings by Newton's
method on the profile's depth).

This is the model of all frequency laws that the equal-frequency likelihood (:mod:`.likelihood`)
is one case of, g-modelling in Efron's sense with the law of T fitted by its nonparametric
maximum likelihood (Kiefer–Wolfowitz): where the column sums resolve a few users (high ε), it reads
skewed frequencies, singletons and pairs that the equal-frequency model reads as one frequency,
with a spread the data support. It needs t_max (the users a column's sum must resolve below the
cut) to stay within :data:`MAX_USERS`, which the noise of an empty column sets: at low ε it is
not used. docs/estimation.md ("Frequency classes") says how the estimate uses it.

References
----------
B. Efron, "Empirical Bayes deconvolution estimates", Biometrika 103(1), 2016.
J. Kiefer, J. Wolfowitz, "Consistency of the maximum likelihood estimator in the presence of
infinitely many incidental parameters", Ann. Math. Statist. 27(4), 1956.
B. G. Lindsay, "The geometry of mixture likelihoods: a general theory", Ann. Statist. 11(1),
1983 (the directional derivative that tells a fit stuck on a face of the simplex).
H. H. Panjer, "Recursive evaluation of a family of compound distributions", ASTIN Bulletin 12(1),
1981 (the law of T; computed here by its generating function).
"""

from __future__ import annotations

import functools
import itertools
import math

import numpy as np

from protocols.core.lazy import linalg, optimize, stats

from ..poisoning import weight_pmf

EXACT_CLASSES = 24       # frequencies 1 … 24 each a class of their own ...
CLASS_RATIO = 1.15       # ... then classes 15% apart up to t_max
MAX_USERS = 128          # t_max at most this: beyond, the sums do not resolve a few users
BULK_QUANTILE = 0.99     # the cut lies above this quantile of the sums (or above all of them)
CUT_TAIL = 1e-10         # a column of t_max + 1 users falls below the cut with at most this probability
HALF_WIDTH = 0.5         # −Δ log-likelihood at the ends of the one-sd profile interval
SOLVER = {"maxiter": 400, "ftol": 1e-8}    # SLSQP's options for every fit (ftol in nats)
BUDGET = 60              # likelihood evaluations of a fit in the information's coordinates at most
RIDGE = 1e-4             # of the information's mean diagonal, added to it before the change of coordinates
CROSSING_TOLERANCE = 0.02   # a crossing of the profile found to this much of ℓ ...
RELATIVE_TOLERANCE = 0.01   # ... or this share of its drop, the larger
TINY = 1e-300
LIGHT_Z = 3.0            # the light users' floor and cap allow this many sd of the heavy columns' noise
ADD_GAIN = 0.01          # a fit frees a class at 0 whose scaled KKT residual exceeds this ...
ROUNDS = 8               # ... and fits again, at most this many times
MAX_FITS = 40            # a crossing's search ends after this many fits, at the far end of its bracket
GROWTH = 4.0             # a search step at most this many times as far from λ̂ as the point it starts from


def class_frequencies(t_max: int) -> np.ndarray:
    """The classes f: 1 … :data:`EXACT_CLASSES`, then ⌈f·CLASS_RATIO⌉ up to ``t_max``.

    Parameters
    ----------
    t_max : int
        The largest class.

    Returns
    -------
    numpy.ndarray
        The classes, increasing (int).
    """
    out = list(range(1, min(EXACT_CLASSES, t_max) + 1))
    while out[-1] < t_max:
        out.append(min(max(out[-1] + 1, math.ceil(out[-1] * CLASS_RATIO)), t_max))
    return np.array(out)


def _cut_of(t_max: int, n: int, p: float, q: float) -> int:
    """The smallest sum a column of t_max + 1 users reaches but with probability <= CUT_TAIL
    (normal quantile of Binomial(t + 1, p) + Binomial(n − t − 1, q), its variance floored at 1/4)."""
    t = t_max + 1
    sd = math.sqrt(max(t * p * (1 - p) + (n - t) * q * (1 - q), 0.25))
    return int(math.floor(t * p + (n - t) * q + float(stats.norm.ppf(CUT_TAIL)) * sd))


def sum_given_users(n: int, p: float, q: float, t_max: int, low: int, cut: int) -> np.ndarray:
    """Pr[c | T] for T = 0 … t_max (rows) and c = low … cut − 1: Binomial(T, p) + Binomial(n − T, q),
    as Binomial(T, p) + Binomial(t_max + 1 − T, q) (one convolution per T, kept per design)
    convolved with the common Binomial(n − t_max − 1, q) (one matrix product).

    Parameters
    ----------
    n : int
        Reports.
    p, q : float
        The per-bit law.
    t_max : int
        The most users of a column.
    low, cut : int
        The range of sums, ``low`` … ``cut`` − 1.

    Returns
    -------
    numpy.ndarray
        (t_max + 1, cut − low) probabilities.
    """
    m = t_max + 1
    base = stats.binom.pmf(np.arange(low - m, cut), n - m, q)       # c − x for x = 0 … m
    window = np.lib.stride_tricks.sliding_window_view(base, m + 1)[:, ::-1]   # [c, x] = base at c − x
    return _few_users(p, q, t_max) @ window.T


@functools.lru_cache(maxsize=16)
def _few_users(p: float, q: float, t_max: int) -> np.ndarray:
    """Pr[Binomial(T, p) + Binomial(t_max + 1 − T, q) = x] for T = 0 … t_max (rows), x = 0 … t_max + 1
    (kept: it depends on the design alone)."""
    return np.stack([weight_pmf(t_max + 1, t, p, q) for t in range(t_max + 1)])


def _linear(kind: str, a: np.ndarray, r: np.ndarray, m: np.ndarray, shift: np.ndarray) -> dict:
    """SLSQP's constraint a·x >= r (``kind`` "ineq") or a·x = r ("eq") on x = shift + m·v, in v, each
    row scaled to unit norm."""
    a_v, r_v = a @ m, r - a @ shift
    size = np.linalg.norm(a_v, axis=1)
    a_v, r_v = a_v / size[:, None], r_v / size
    return {"type": kind, "fun": lambda v: a_v @ v - r_v, "jac": lambda v: a_v}


class _OutOfBudget(Exception):
    """A fit in the information's coordinates took more likelihood evaluations than its budget."""


class FrequencyClasses:
    """The likelihood of column sums (l = 1) over the rates g of frequency classes (module
    docstring); ``usable`` is False where t_max would exceed :data:`MAX_USERS` (it is at most
    n − 1: a column holds n users at most, and more than t_max is the heavy class).

    Parameters
    ----------
    counts : numpy.ndarray
        Column sums c_j (L,).
    n : int
        Reports.
    p, q : float
        The per-bit law.
    """

    def __init__(self, counts: np.ndarray, n: int, p: float, q: float):
        counts = np.asarray(counts, dtype=np.int64)
        self.L = counts.size
        most = min(MAX_USERS, n - 1)            # a column of more than t_max users is heavy: n at most
        if most < 1:
            self.usable = False
            return
        t_max = min(EXACT_CLASSES, most)
        while _cut_of(t_max, n, p, q) <= counts.max() and t_max < most:
            t_max = min(int(t_max * 1.25) + 1, most)
        cut = _cut_of(t_max, n, p, q)
        low = int(counts.min())
        self.usable = cut > np.quantile(counts, BULK_QUANTILE) and cut > low
        if not self.usable:
            return
        self.t_max, self.f, self.mass = t_max, class_frequencies(t_max), n / self.L
        self.scale = math.sqrt(self.mass / self.L)            # the rates' scale where ℓ's curvature is of order 1
        self.hist = np.bincount(counts[counts < cut] - low, minlength=cut - low).astype(float)
        self.censored = float(np.count_nonzero(counts >= cut))
        users = np.clip((counts[counts >= cut] - n * q) / (p - q), 0, n)   # unbiased per column
        spread = np.sqrt(users * p * (1 - p) + (n - users) * q * (1 - q)) / (p - q)
        heavy = np.maximum(users - LIGHT_Z * spread - t_max, 0.0).sum()      # at least this many in heavy values
        self.light_cap = min(self.mass, (n - heavy) / (self.L - self.censored))
        outside = n - users.sum() - LIGHT_Z * math.sqrt(float(np.sum(spread ** 2)))   # heavy values hold no more
        self.light_floor = min(max(outside, 0.0) / self.L, self.light_cap)             # than those columns
        self.kernel = sum_given_users(n, p, q, t_max, low, cut)             # (T, c)
        self.kernel_top = np.maximum(1 - self.kernel.sum(axis=1), 0.0)      # Pr[c >= cut | T]
        self.size = 1 << int(math.ceil(math.log2(4 * (t_max + 1))))        # T beyond folds back: negligible
        self.phase = np.exp(-2j * math.pi * np.outer(np.arange(self.size // 2 + 1), self.f) / self.size) - 1

    def users_law(self, g: np.ndarray, heavy: float) -> np.ndarray:
        """Pr[T = t], t = 0 … t_max, of rates g on the classes and ``heavy`` (products here and in
        :meth:`loglik` by einsum: numpy's matmul hands these small matrices to threaded BLAS, whose
        threads cost more than the product)."""
        light = np.fft.irfft(np.exp(np.einsum("kf,f->k", self.phase, g)), self.size)[:self.t_max + 1]
        return np.maximum(light, 0.0) * math.exp(-heavy)

    def loglik(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """ℓ and its gradient at x = (g of each class, heavy rate): ∂Pr[T = t]/∂g_f =
        Pr[T = t − f] − Pr[T = t], ∂Pr[T = t]/∂heavy = −Pr[T = t]."""
        r = self.users_law(x[:-1], x[-1])
        prob, prob_top = self._sums_law(r)
        ll = float(np.sum(self.hist * np.log(prob))) + self.censored * math.log(prob_top)
        w = np.einsum("tc,c->t", self.kernel, self.hist / prob) + self.kernel_top * (self.censored / prob_top)
        u = w - self.censored / prob_top                                                   # less ∂ℓ/∂Pr[T > t_max]
        lagged = np.correlate(u, r, mode="full")[self.t_max:]            # Σ_t u_t Pr[T = t − f], f = 0 … t_max
        return ll, np.append(lagged[self.f] - lagged[0], -lagged[0])

    def _sums_law(self, r: np.ndarray) -> tuple[np.ndarray, float]:
        """Pr[c] of every sum below the cut and Pr[c >= cut] (floored at :data:`TINY`) of the
        users' law r (:meth:`users_law`; T > t_max above the cut)."""
        prob = np.maximum(np.einsum("t,tc->c", r, self.kernel), TINY)
        return prob, max(float(np.sum(r * self.kernel_top)) + max(1.0 - r.sum(), 0.0), TINY)

    def information(self, x: np.ndarray) -> np.ndarray:
        """−∂²ℓ/∂x² in its expected (Gauss–Newton) form Σ_c h_c·∇P_c∇P_cᵀ/P_c² at the rates x; not
        finite where a P_c at its floor squares to 0 (sums of a law far from x: the caller then fits
        without it)."""
        r = self.users_law(x[:-1], x[-1])
        shifted = np.concatenate([np.zeros(self.t_max + 1), r])
        moved = np.stack([shifted[self.t_max + 1 - f: 2 * self.t_max + 2 - f] for f in self.f], axis=1) - r[:, None]
        moved = np.append(moved, -r[:, None], axis=1)                          # ∂Pr[T = t]/∂x
        prob, prob_top = self._sums_law(r)
        jac = np.einsum("tc,tf->cf", self.kernel, moved)
        jac_top = np.einsum("t,tf->f", self.kernel_top - 1.0, moved)
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            return np.einsum("cf,c,cg->fg", jac, self.hist / prob ** 2, jac) + np.outer(jac_top, jac_top) * (
                self.censored / prob_top ** 2)

    def _solve(self, x0: np.ndarray, lam: float | None = None) -> tuple[np.ndarray, float, float]:
        """The maximum of ℓ over the rates, or over those of Σ = ``lam`` (a point of the profile),
        from the rates ``x0``: (x, ℓ, the profile's slope dℓ/dλ there).

        SLSQP (:meth:`_fit_free`) in the rates or in the coordinates of their information at the
        start, g >= 0 and heavy >= 0, under the users' constraints (:meth:`_rows`); without ``lam``,
        Σ >= 1/L (one value at least). A class at 0 keeps its gradient on that bound, so
        a fit leaves a face of the simplex of shares where a class gains (the maximum over a
        mixture's weights, where no class gains from taking users from the others: Lindsay 1983;
        shares by softmax lose that gradient near 0 and stalled there, all users alone where a
        fifth are in pairs, 14 nats below the maximum). The slope is the multiplier ν of Σ = λ
        (envelope theorem; :meth:`_multipliers`). The fit frees the classes the start holds, their
        neighbours and the first and last class (:meth:`_around`); where a class at 0 would gain
        (its KKT residual, in the scaled rates, above :data:`ADD_GAIN`) it is freed and the fit
        goes on (at most :data:`ROUNDS` times), and where the classes freed cannot meet the
        constraints, all are."""
        rows = self._rows()
        x = np.maximum(np.asarray(x0, dtype=float), 0.0)
        free = self._around(x > 0)
        for _ in range(ROUNDS):
            x, ll, residual, nu = self._fit_free(x, free, rows, lam)
            if not free[:-1].all() and ((lam is not None and abs(x.sum() - lam) > 1e-3 * lam)
                                        or any(a @ x > r + 1e-3 * max(abs(r), self.mass) for a, r, _ in rows)):
                free = self._around(np.ones(free.size, dtype=bool))       # not feasible on these classes
                continue
            gain = residual * self.scale > ADD_GAIN
            gain[-1] = False
            if not (gain & ~free).any() or math.isnan(nu):
                break
            free = self._around((x > 0) | gain)
        return x, ll, nu

    def _fit_free(self, x: np.ndarray, free: np.ndarray, rows: list, lam: float | None) -> tuple:
        """The fit over the rates ``free`` from x (the others at 0): (x, ℓ, the KKT residual, ν).

        SLSQP in coordinates v where the expected information at x is the identity (x_free = x +
        R⁻¹v, RᵀR the information plus :data:`RIDGE` of its mean diagonal; the bounds x >= 0 rows
        of the constraints, each row scaled to unit norm): SLSQP's quasi-Newton matrix starts at the
        identity, so from a start near the maximum (a continuation's predictor) its first steps are
        Newton's. Where that stops short (SLSQP fails, takes more than :data:`BUDGET` evaluations,
        or leaves a free rate's KKT residual above :data:`ADD_GAIN`: far from the maximum the
        information at the start misleads), SLSQP in the rates scaled by (L/(n/L))^{1/2} (where ℓ's
        curvature is of order 1), with the bounds as bounds, from x."""
        k, scale = int(free.sum()), self.scale
        eq = [(a[free], r) for a, r, equal in rows if equal]
        ineq = [(a[free], r) for a, r, equal in rows if not equal]
        if lam is None:
            ineq.append((-np.ones(k), -1.0 / self.L))
        else:
            eq.append((np.ones(k), lam))
        maps = [(scale * np.eye(k), np.zeros(k), math.inf)]
        info = self.information(x)[np.ix_(free, free)]
        if np.isfinite(info).all() and np.trace(info) > 0:
            info += RIDGE * np.trace(info) / k * np.eye(k)
            back = linalg.solve_triangular(np.linalg.cholesky(info).T, np.eye(k))
            maps.insert(0, (back, x[free], BUDGET))
        for m, shift, budget in maps:
            bounded = budget == math.inf
            above = [(-a, -r) for a, r in ineq] + ([] if bounded else [(row, 0.0) for row in np.eye(k)])
            limits = [_linear(kind, np.array([a for a, _ in pairs]), np.array([r for _, r in pairs]), m, shift)
                      for kind, pairs in (("ineq", above), ("eq", eq)) if pairs]
            calls = itertools.count(1)

            def objective(v, m=m, shift=shift, budget=budget, calls=calls):
                if next(calls) > budget:
                    raise _OutOfBudget
                y = np.zeros(free.size)
                y[free] = np.maximum(shift + m @ v, 0.0)
                ll, grad = self.loglik(y)
                return -ll, -(grad[free] @ m)
            try:
                fit = optimize.minimize(objective, x[free] / scale if bounded else np.zeros(k), jac=True,
                                        method="SLSQP", bounds=[(0.0, None)] * k if bounded else None,
                                        constraints=limits, options=SOLVER)
            except _OutOfBudget:
                continue
            out = np.zeros(free.size)
            out[free] = np.maximum(shift + m @ fit.x, 0.0)
            ll, grad = self.loglik(out)
            residual, nu = self._multipliers(out, grad, rows, lam is not None)
            if bounded or (fit.status == 0 and not (residual[free] * scale > ADD_GAIN).any()):
                break
        return out, ll, residual, nu

    def _rows(self) -> list:
        """The users' constraints on the rates x = (g, heavy), as (a, r, equal) for a·x <= r (= r
        where ``equal``): Σ_f f·g_f = n/L where no sum reaches the cut; else Σ_f f·g_f + (t_max +
        1)·heavy <= n/L and ``light_floor`` <= Σ_f f·g_f <= ``light_cap``: the users of the columns
        above the cut, read from their sums ((c − nq)/(p − q) each, unbiased), leave the light
        classes at least the rest (heavy values hold no more than those columns) and at most the
        rest with t_max users of each column allowed to be light, each within :data:`LIGHT_Z` sd
        of those sums' noise."""
        light = np.append(self.f.astype(float), 0.0)
        if not self.censored:
            return [(light, self.mass, True)]
        return [(np.append(self.f.astype(float), self.t_max + 1.0), self.mass, False), (light, self.light_cap, False),
                (-light, -self.light_floor, False)]

    def _around(self, support: np.ndarray) -> np.ndarray:
        """The rates a fit frees: the classes of ``support`` and their neighbours, the first and
        the last class (so that every mean frequency between them is feasible), and the heavy
        rate where some sum reaches the cut."""
        free = support.copy()
        free[:-2] |= support[1:-1]
        free[1:-1] |= support[:-2]
        free[0] = free[-2] = True
        free[-1] = self.censored > 0
        return free

    def _multipliers(self, x: np.ndarray, grad: np.ndarray, rows: list, fixed: bool) -> tuple[np.ndarray, float]:
        """The KKT residual ∂ℓ/∂x_i − Σ_k μ_k·a_k,i − ν of every rate and ν, the multiplier of Σ = λ
        (0 where not ``fixed``), at the rates x: the multipliers of the constraints that bind (the
        equal ones and those within 10⁻⁹ of their bound) by least squares on the rates above 0;
        ν is NaN where they are not separable (one class holds every user)."""
        on = x > 1e-9 * x.max()
        normals = [a for a, r, equal in rows if equal or r - a @ x <= 1e-9 * max(abs(r), self.mass)]
        if fixed:
            normals.append(np.ones(x.size))
        if not normals:
            return grad, 0.0
        A = np.stack(normals, axis=1)
        m, _, rank, _ = np.linalg.lstsq(A[on], grad[on], rcond=None)
        if fixed and rank < len(normals):
            return grad - A @ m, math.nan
        return grad - A @ m, float(m[-1]) if fixed else 0.0

    def fit(self) -> float:
        """λ̂, the sum of the maximum likelihood rates (from the light users spread evenly over the
        classes: all n/L of them where no sum reaches the cut, else half their cap, and the heavy
        class half its bound); kept with ℓ̂ as the first point of the profile (:meth:`_along`), with
        its upper end ``top``: every light user alone (all n/L where no sum reaches the cut, D = n;
        else the cap, and the heavy class at its bound)."""
        light = (self.light_floor + self.light_cap) / 2 if self.censored else self.light_cap
        start = np.append(light / self.f.size / self.f, (self.mass - light) / (self.t_max + 1) / 2)
        self.x, self.best, _ = self._solve(start)
        self.lam = float(self.x.sum())
        alone = np.append(np.where(self.f == 1, self.light_cap, 0.0), (self.mass - self.light_cap) / (self.t_max + 1))
        self.top = float(alone.sum())
        self.bottom = max(1.0 / self.L, self.light_floor / self.t_max)
        self._alone = (self.top, self.loglik(alone)[0], alone, math.nan)
        self._profile = [(self.lam, self.best, self.x, 0.0), self._alone]
        return self.lam

    def _at(self, lam: float) -> tuple:
        """The profile's point (λ, ℓ, x, dℓ/dλ) at ``lam``, fitted from the rates on the line
        between the two nearest points found so far where it lies between them (a continuation's
        predictor), else from the nearest point's, and kept for the crossings after it. At the
        profile's lower end ``bottom`` also from the light floor's users all in the largest class
        and the rest of λ heavy, the better kept: the heavy column of a value most users hold is a
        corner the nearest point's rates need not lead to."""
        a, b = sorted(self._profile, key=lambda point: abs(point[0] - lam))[:2]
        between = min(a[0], b[0]) < lam < max(a[0], b[0])
        start = a[2] + (lam - a[0]) / (b[0] - a[0]) * (b[2] - a[2]) if between else a[2]
        found = [self._solve(start, lam)]
        if lam == self.bottom:
            corner = np.zeros(self.f.size + 1)
            corner[-2] = self.light_floor / self.t_max
            corner[-1] = max(lam - corner[-2], 0.0) if self.censored else 0.0
            found.append(self._solve(corner, lam))
        x, ll, slope = max(found, key=lambda fit: fit[1])
        point = (lam, ll, x, slope)
        self._profile.append(point)
        return point

    def _along(self, drop: float, sign: float) -> float:
        """The λ on the side ``sign`` of λ̂ where the profile falls ``drop`` below ℓ̂: Newton's
        method on the depth φ = (ℓ̂ − ℓ)^{1/2} − drop^{1/2} (linear in λ where the profile is
        quadratic; φ' = −(dℓ/dλ)/(2(ℓ̂ − ℓ)^{1/2}) from each point's slope), from the points found so
        far on that side: the first that falls ``drop`` and the one before it bracket the crossing,
        and the step is taken from whichever of them has the smaller |φ| and lands inside the
        bracket (else the Illinois false position on φ there; a bisection where the bracket did not
        halve in two steps); while no point falls ``drop``, from the farthest, at most
        :data:`GROWTH` times as far from λ̂ (a tenth of λ̂ at first), within the profile's ends
        ``bottom`` … ``top``; where nothing is known on that side, at the distance the other points'
        quadratic gives (:meth:`_first_gap`). Until a point is within :data:`CROSSING_TOLERANCE` of
        ℓ̂ − ``drop`` (:data:`RELATIVE_TOLERANCE` of ``drop`` for larger drops), or after
        :data:`MAX_FITS` fits (then the bracket's far end). Where ℓ falls less than ``drop`` by the
        end ``bottom`` (one value, or n/t_max where no sum reaches the cut: no value holds more than
        t_max users), that end."""
        level, tolerance = math.sqrt(drop), max(CROSSING_TOLERANCE, RELATIVE_TOLERANCE * drop)
        end = self.bottom if sign < 0 else self.top
        fits, widths = 0, []

        def depth(point):
            return math.sqrt(max(self.best - point[1], 0.0)) - level

        def newton(point):
            fall = self.best - point[1]
            if not (fall > 0 and sign * point[3] < 0):
                return None
            return point[0] + (depth(point)) * 2 * math.sqrt(fall) / point[3]
        points = sorted((p for p in self._profile if sign * (p[0] - self.lam) >= 0),
                        key=lambda p: sign * (p[0] - self.lam))
        first = next((k for k, p in enumerate(points) if depth(p) >= 0), None)
        inner, outer = (points[-1], None) if first is None else (points[first - 1], points[first])
        w_inner, w_outer, side = depth(inner), (None if outer is None else depth(outer)), 0
        while True:
            if outer is not None:
                if not self.best - outer[1] - drop > tolerance:      # (or NaN)
                    return outer[0]
                if abs(outer[0] - inner[0]) <= 1e-9 * self.lam:
                    return outer[0]
            if self.best - inner[1] - drop >= -tolerance and inner[0] != self.lam:
                return inner[0]
            steps = [(abs(depth(p)), newton(p), p) for p in (inner, outer) if p is not None]
            steps = [(d, x, p) for d, x, p in steps if x is not None
                     and (outer is None or min(inner[0], outer[0]) < x < max(inner[0], outer[0]))]
            step = None
            if steps:
                _, step, base = min(steps, key=lambda found: found[0])
                if abs(step - self.lam) > GROWTH * abs(base[0] - self.lam):
                    step = self.lam + sign * GROWTH * abs(base[0] - self.lam)
            if step is None and inner[0] == self.lam:         # nothing known on this side yet
                bound = end if outer is None else (self.lam + outer[0]) / 2
                lam = self.lam + sign * self._first_gap(drop)
                lam = max(lam, bound) if sign < 0 else min(lam, bound)
            elif outer is None:
                reach = inner[0] + sign * max(GROWTH * abs(inner[0] - self.lam), 0.1 * self.lam)
                reach = max(reach, end) if sign < 0 else min(reach, end)
                lam = reach if step is None or sign * (step - inner[0]) <= 0 else (
                    max(step, reach) if sign < 0 else min(step, reach))
            else:
                widths.append(abs(outer[0] - inner[0]))
                lam = outer[0] - w_outer * (outer[0] - inner[0]) / (w_outer - w_inner)
                if len(widths) > 2 and widths[-1] > widths[-3] / 2:          # slow: bisect
                    lam = (inner[0] + outer[0]) / 2
                elif step is not None and min(inner[0], outer[0]) < step < max(inner[0], outer[0]):
                    lam = step
            if fits == MAX_FITS:
                return end if outer is None else outer[0]
            fits += 1
            last = self._at(lam)
            f_last = depth(last)
            if f_last < 0 and outer is None:
                if lam == end:
                    return end
                inner, w_inner = last, f_last
            elif f_last < 0:                                  # Illinois: an end kept twice is halved
                inner, w_inner = last, f_last
                w_outer, side = (w_outer / 2 if side == -1 else w_outer), -1
            else:
                w_inner = w_inner / 2 if side == 1 else w_inner
                outer, w_outer, side = last, f_last, 1

    def _first_gap(self, drop: float) -> float:
        """How far from λ̂ the profile falls ``drop`` on a side where nothing is known yet: by the
        quadratic through λ̂ and the point found so far (on either side, the upper end aside) whose
        fall is nearest ``drop``; a tenth of λ̂ where there is none."""
        known = [p for p in self._profile if p is not self._alone and self.best - p[1] > 0]
        if not known:
            return 0.1 * self.lam
        near = min(known, key=lambda p: abs(math.log((self.best - p[1]) / drop)))
        return abs(near[0] - self.lam) * math.sqrt(drop / (self.best - near[1]))

    def _at_one_class(self, f: int) -> np.ndarray:
        """The light rates with every light user of the maximum (after :meth:`fit`) at class f."""
        return np.where(self.f == f, float(np.sum(self.x[:-1] * self.f)) / f, 0.0)

    def within(self, lam: float, drop: float) -> bool:
        """Whether some rates of Σ = ``lam`` have ℓ >= ℓ̂ − ``drop`` among those that move a part of
        the light users of the maximum (after :meth:`fit`) into one class (a quick sufficient check
        that ``lam`` is inside the profile's interval at ``drop``: each is one evaluation)."""
        g, heavy = self.x[:-1], self.x[-1]
        now = g.sum()
        for f in self.f:
            one = self._at_one_class(f)
            alone = one.sum()                                  # the light rates' Σ with all users at f
            if alone == now:
                continue
            part = (lam - heavy - now) / (alone - now)
            if 0 <= part <= 1 and self.loglik(np.append((1 - part) * g + part * one, heavy))[0] >= self.best - drop:
                return True
        return False

    def law_drop(self) -> float:
        """ℓ̂ − the most likely equal frequency: the maximum (after :meth:`fit`) against its light
        users all in one class, the best class (one evaluation each): the likelihood ratio of the
        equal-frequency law itself, which the equal-frequency reading assumes."""
        heavy = self.x[-1]
        return self.best - max(self.loglik(np.append(self._at_one_class(f), heavy))[0] for f in self.f)

    def end_drop(self, sign: float) -> float:
        """ℓ̂ − ℓ at the profile's end on the side ``sign`` (after :meth:`fit`): above, ``top`` (every
        light user alone: D = n where no sum reaches the cut, the only rates of Σ_f f·g_f = n/L);
        below, ``bottom`` (one value, or n/t_max; :meth:`_at`)."""
        if sign > 0:
            return self.best - self._alone[1]
        lam = self.bottom
        point = next((p for p in self._profile if p[0] == lam), None)
        return self.best - (self._at(lam) if point is None else point)[1]

    def crossing(self, drop: float, sign: float) -> float:
        """The λ on the side ``sign`` of λ̂ where the profile falls ``drop`` below ℓ̂ (after
        :meth:`fit`; :meth:`_along`). Where ℓ falls less than ``drop`` by the profile's upper end
        ``top`` (every light user alone), that end."""
        if sign > 0 and self.end_drop(1.0) <= drop:
            return self.top
        return self._along(drop, sign)

    def interval(self, drop: float = HALF_WIDTH) -> tuple[float, float]:
        """The λ where the profile falls ``drop`` below ℓ̂ on each side of λ̂ (after :meth:`fit`);
        twice ``drop`` is the likelihood-ratio statistic of λ, χ²₁ in the limit."""
        return self.crossing(drop, -1.0), self.crossing(drop, 1.0)


