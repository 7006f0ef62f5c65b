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
singletons alone it pins D to n). The number of values is D = L·λ, λ = Σ_f g_f (heavy included):
the likelihood of every column's sum, maximised over the g, is profiled over λ by tilting (the
maximum of ℓ + t·log λ lies on the profile, at a λ that moves with t), each fit a BFGS over the
classes' shares of the users.

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
import math

import numpy as np

from protocols.core.lazy import optimize, special, stats

from ..poisoning import weight_pmf

EXACT_CLASSES = 24       # frequencies 1 … 24 each a class of their own ...
CLASS_RATIO = 1.15       # ... then classes 15% apart up to t_max
MAX_USERS = 128          # t_max at most this: beyond, the sums do not resolve a few users
BULK_QUANTILE = 0.99     # the cut lies above this quantile of the sums (or above all of them)
CUT_TAIL = 1e-10         # a column of t_max + 1 users falls below the cut with at most this probability
HALF_WIDTH = 0.5         # −Δ log-likelihood at the ends of the one-sd profile interval
SOLVER = {"maxiter": 400, "gtol": 1e-4}     # BFGS's options for every fit (L-BFGS-B calls threaded
                                             # BLAS at every step, which stalls on a busy machine)
MAX_TILT = 2.0 ** 14     # ℓ + t·log λ is maximised for |t| up to this ...
CROSSING_TOLERANCE = 0.02   # ... and a crossing of the profile found to this much of ℓ
SATURATED = 12.0         # a tilted fit starts with every class's log share within this of the largest
TINY = 1e-300
FLOOR = 1e-12            # the light users' share and the heavy class's part of its bound at least this
ESCAPE_GAIN = 0.05       # a fit stopped where a class gains more than this per unit share of the users ...
ESCAPE_SHARE = 0.05      # ... gives that class this share and starts again ...
ESCAPES = 8              # ... at most this many times


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
        self.hist = np.bincount(counts[counts < cut] - low, minlength=cut - low).astype(float)
        self.censored = float(np.count_nonzero(counts >= cut))
        self.kernel = sum_given_users(n, p, q, t_max, low, cut)             # (T, c)
        self.kernel_top = np.maximum(1 - self.kernel.sum(axis=1), 0.0)      # Pr[c >= cut | T]
        self.size = 1 << int(math.ceil(math.log2(4 * (t_max + 1))))        # T beyond folds back: negligible
        self.phase = np.exp(-2j * math.pi * np.outer(np.arange(self.size // 2 + 1), self.f) / self.size) - 1

    def users_law(self, g: np.ndarray, heavy: float) -> np.ndarray:
        """Pr[T = t], t = 0 … t_max, of rates g on the classes and ``heavy``."""
        light = np.fft.irfft(np.exp(np.einsum("kf,f->k", self.phase, g)), self.size)[:self.t_max + 1]
        return np.maximum(light, 0.0) * math.exp(-heavy)

    def loglik(self, x: np.ndarray) -> tuple[float, np.ndarray]:
        """ℓ and its gradient at x = (g of each class, heavy rate): ∂Pr[T = t]/∂g_f =
        Pr[T = t − f] − Pr[T = t], ∂Pr[T = t]/∂heavy = −Pr[T = t]."""
        r = self.users_law(x[:-1], x[-1])
        top = max(1.0 - r.sum(), 0.0)
        prob = np.maximum(np.einsum("t,tc->c", r, self.kernel), TINY)
        prob_top = max(float(np.sum(r * self.kernel_top)) + top, TINY)
        ll = float(np.sum(self.hist * np.log(prob))) + self.censored * math.log(prob_top)
        w = np.einsum("tc,c->t", self.kernel, self.hist / prob) + self.kernel_top * (self.censored / prob_top)
        u = w - self.censored / prob_top                                                   # less ∂ℓ/∂Pr[T > t_max]
        lagged = np.correlate(u, r, mode="full")[self.t_max:]            # Σ_t u_t Pr[T = t − f], f = 0 … t_max
        return ll, np.append(lagged[self.f] - lagged[0], -lagged[0])

    def _rates(self, z: np.ndarray) -> tuple[np.ndarray, float, float]:
        """(g, heavy, light users' mean) of the free coordinates z = (θ, ψ, χ): the light classes
        share their users' mean m_L by softmax(θ), g_f = m_L·w_f/f; with no sum at the cut,
        m_L = n/L and heavy = 0; else m_L = (n/L)·σ(ψ) and heavy = (n/L − m_L)/(t_max + 1)·σ(χ)
        (a heavy value has more than t_max users)."""
        w = np.exp(z[:self.f.size] - z[:self.f.size].max())
        w /= w.sum()
        if self.censored == 0:
            return self.mass * w / self.f, 0.0, self.mass
        light = self.mass * _sigmoid(z[-2])
        return light * w / self.f, (self.mass - light) / (self.t_max + 1) * _sigmoid(z[-1]), light

    def _share_slopes(self, z: np.ndarray, tilt: float):
        """(ℓ, λ, ∂/∂g and ∂/∂heavy of ℓ + tilt·log λ, the light classes' user shares w and the
        slopes v_f = m_L·∂/∂g_f/f of that objective in them) at the free coordinates z."""
        g, heavy, light = self._rates(z)
        lam = g.sum() + heavy
        ll, grad = self.loglik(np.append(g, heavy))
        a, b = grad[:-1] + tilt / lam, grad[-1] + tilt / lam
        return ll, lam, a, b, g * self.f / light, light * a / self.f, light

    def _tilted(self, z: np.ndarray, tilt: float) -> tuple[float, np.ndarray]:
        """−(ℓ + tilt·log λ) at the free coordinates z and its gradient (the chain rule through
        :meth:`_rates`)."""
        ll, lam, a, b, w, v, light = self._share_slopes(z, tilt)
        F = self.f.size
        out = np.zeros(z.size)
        out[:F] = w * (v - np.sum(w * v))
        if self.censored:
            s_psi, s_chi = _sigmoid(z[-2]), _sigmoid(z[-1])
            d_light = np.sum(w * a / self.f) - b * s_chi / (self.t_max + 1)
            out[-2] = d_light * self.mass * s_psi * (1 - s_psi)
            out[-1] = b * (self.mass - light) / (self.t_max + 1) * s_chi * (1 - s_chi)
        return -(ll + tilt * math.log(lam)), -out

    def _solve(self, z0: np.ndarray, tilt: float) -> tuple[np.ndarray, float, float]:
        """The maximum of ℓ + tilt·log λ from ``z0``: (z, ℓ, λ) there.

        A class whose share the softmax has driven to nearly 0 has a vanishing gradient, so BFGS
        can stop at a face of the simplex of shares that is not the maximum (all users alone,
        where a fifth are in pairs: 14 nats below it). The maximum over shares is where no class
        gains from taking users from the others, v_f <= Σ w·v for every f (the directional
        derivative of a mixture's likelihood, Lindsay 1983); while some class gains more than
        :data:`ESCAPE_GAIN` per unit share, it is given :data:`ESCAPE_SHARE` of the users and the
        fit starts again from there (at most :data:`ESCAPES` times)."""
        z = z0
        for _ in range(ESCAPES + 1):
            res = optimize.minimize(self._tilted, z, args=(tilt,), jac=True, method="BFGS", options=SOLVER)
            _, _, _, _, w, v, _ = self._share_slopes(res.x, tilt)
            gain = v - np.sum(w * v)
            best = int(np.argmax(gain))
            if gain[best] <= ESCAPE_GAIN:
                break
            z = res.x.copy()
            others = np.delete(z[:self.f.size], best)
            z[best] = special.logsumexp(others) + math.log(ESCAPE_SHARE / (1 - ESCAPE_SHARE))
        g, heavy, _ = self._rates(res.x)
        lam = float(g.sum() + heavy)
        return res.x, -float(res.fun) - tilt * math.log(lam), lam

    def fit(self) -> float:
        """λ̂, the sum of the maximum likelihood rates (from users spread evenly over the classes
        and from all at one user, the better kept); kept with ℓ̂, as the first point of the profile on
        each side (:meth:`_along`)."""
        starts = [np.zeros(self.f.size + 2), np.append(np.eye(self.f.size)[0] * 8.0, [0.0, 0.0])]
        self.z, self.best, self.lam = max((self._solve(z, 0.0) for z in starts), key=lambda found: found[1])
        self._profile = {sign: [(0.0, self.best, self.lam, self.z)] for sign in (-1.0, 1.0)}
        return self.lam

    def _at(self, sign: float, size: float, near: tuple) -> tuple:
        """The profile's point (size, ℓ, λ, z) at the tilt ``sign``·``size``, fitted from the point
        ``near`` (shares below e^-12 of the largest raised to it: their softmax gradient vanishes
        there) and kept for the crossings after it."""
        start = near[3].copy()
        start[:self.f.size] = np.maximum(start[:self.f.size], start[:self.f.size].max() - SATURATED)
        z, ll, lam = self._solve(start, sign * size)
        point = (size, ll, lam, z)
        self._profile[sign].append(point)
        self._profile[sign].sort(key=lambda found: found[0])
        return point

    def _reaching(self, point: tuple, drop: float) -> float:
        """The tilt size at which the profile's quadratic through λ̂ and ``point`` (ℓ = ℓ̂ − a(λ − λ̂)²,
        where ℓ + t·log λ has its maximum at t = 2aλ|λ − λ̂|) falls ``drop``, between twice and 64
        times the point's tilt (1 at λ̂; 64 times where the profile has not moved from λ̂ or ℓ̂)."""
        size, ll, lam, _ = point
        if size == 0:
            return 1.0
        a = (self.best - ll) / (lam - self.lam) ** 2 if lam != self.lam else 0.0
        if not a > 0:
            return 64 * size
        gap = math.sqrt(drop / a)
        end = self.lam + math.copysign(gap, lam - self.lam)
        return min(max(2 * a * abs(end) * gap, 2 * size), 64 * size)

    def _along(self, drop: float, sign: float) -> float:
        """The λ where the profile falls ``drop`` below ℓ̂ along tilts of sign ``sign``:
        from the profile's points found so far on that side (every fit is one), the first that
        falls ``drop`` or more and the one before it; while there is none, tilts growing from
        the largest (:meth:`_reaching`); then the Illinois false position in the tilt on the
        bracket until a point is within ``CROSSING_TOLERANCE`` (each fit starts from the nearer
        end); the largest tilt's if the profile never falls that far."""
        points = self._profile[sign]
        first = next((k for k, (_, ll, _, _) in enumerate(points) if self.best - ll >= drop), 0)
        if first:
            inner, outer = points[first - 1], points[first]
        else:
            inner = points[-1]
            outer = self._at(sign, self._reaching(inner, drop), inner)
            while self.best - outer[1] < drop and outer[0] < MAX_TILT:
                inner, outer = outer, self._at(sign, min(self._reaching(outer, drop), MAX_TILT), outer)
        f_inner, f_outer = self.best - inner[1] - drop, self.best - outer[1] - drop
        w_inner, w_outer, side = f_inner, f_outer, 0             # the Illinois weights of the ends
        while True:
            if not (f_outer > CROSSING_TOLERANCE and outer[0] - inner[0] >= 1e-6 * outer[0]):   # (or NaN)
                return outer[2]
            if f_inner >= -CROSSING_TOLERANCE:
                return inner[2]
            size = outer[0] - w_outer * (outer[0] - inner[0]) / (w_outer - w_inner)
            found = self._at(sign, size, inner if size - inner[0] < outer[0] - size else outer)
            f_found = self.best - found[1] - drop
            if f_found < 0:
                inner, f_inner, w_inner = found, f_found, f_found
                w_outer, side = (w_outer / 2 if side == -1 else w_outer), -1
            else:
                outer, f_outer, w_outer = found, f_found, f_found
                w_inner, side = (w_inner / 2 if side == 1 else w_inner), 1

    def within(self, lam: float, drop: float) -> bool:
        """Whether some rates of Σ = ``lam`` have ℓ >= ℓ̂ − ``drop`` among those that move a part of
        the light users of the maximum (after :meth:`fit`) into one class (a quick sufficient check
        that ``lam`` is inside the profile's interval at ``drop``: each is one evaluation)."""
        g, heavy, light = self._rates(self.z)
        now = g.sum()
        for f in self.f:
            alone = light / f                                  # the light rates' Σ with all users at f
            if alone == now:
                continue
            part = (lam - heavy - now) / (alone - now)
            if 0 <= part <= 1 and self.loglik(np.append((1 - part) * g + part * np.where(self.f == f, alone, 0.0),
                                                        heavy))[0] >= self.best - drop:
                return True
        return False

    def alone_drop(self) -> float:
        """ℓ̂ − ℓ at D = n, where every user is alone: the only rates of Σ_f g_f = n/L (after
        :meth:`fit`; the profile's upper end, which no tilt passes)."""
        return self.best - self.loglik(np.append(np.where(self.f == 1, self.mass, 0.0), 0.0))[0]

    def crossing(self, drop: float, sign: float) -> float:
        """The λ on the side ``sign`` of λ̂ where the profile falls ``drop`` below ℓ̂ (after
        :meth:`fit`), by tilting: the maximum of ℓ + t·log λ lies on the profile, at a λ that
        moves with t. Where ℓ falls less than ``drop`` by λ = n/L (every user alone, the
        profile's upper end), that end."""
        if sign > 0 and self.alone_drop() <= drop:
            return self.mass
        return self._along(drop, sign)

    def interval(self, drop: float = HALF_WIDTH) -> tuple[float, float]:
        """The λ where the profile falls ``drop`` below ℓ̂ on each side of λ̂ (after :meth:`fit`);
        twice ``drop`` is the likelihood-ratio statistic of λ, χ²₁ in the limit."""
        return self.crossing(drop, -1.0), self.crossing(drop, 1.0)


def _sigmoid(x: float) -> float:
    """1/(1 + e^{−x}) (scipy.special.expit), at least ``FLOOR`` (so that λ stays above 0)."""
    return max(float(special.expit(x)), FLOOR)
