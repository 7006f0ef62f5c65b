"""The set sketch (bfrrce.sets): cells, privacy (exact audit), reports, sums and the estimator."""

import math

import mmh3
import numpy as np
import pytest

from bfrrce import ColumnSums, SetSketch
from bfrrce.sets import item_probabilities, level_probabilities
from protocols.audit import exact_epsilon
from protocols.errors import IncompatibleError, LDPTypeError, LDPValueError


def test_cells_follow_the_hash_bits():
    sk = SetSketch(epsilon=1.0, buckets=16, levels=6, hash_seed=7)
    items = list(range(500))
    for item, cell in zip(items, sk.cells(items)):
        h = mmh3.hash(int(item).to_bytes(8, "little", signed=True), 7, signed=False)
        rest = h >> 4
        tz = 32 if rest == 0 else (rest & -rest).bit_length() - 1
        assert cell == min(tz, 5) * 16 + (h & 15)
    assert sk.cells(["a", b"a"]).tolist()[0] == sk.cells([b"a"]).tolist()[0]   # canonical keys


def test_level_probabilities_sum_to_one_and_absorb_the_tail():
    pi = level_probabilities(4096, 24)
    assert math.isclose(pi.sum(), 1.0)
    assert pi[0] == 0.5 and pi[19] == 2.0 ** -20
    assert (pi[20:23] == 0).all() and pi[23] == 2.0 ** -20          # 20 hash bits above the bucket
    assert math.isclose(level_probabilities(16, 4)[3], 2.0 ** -3)


@pytest.mark.parametrize("perturbation", ["symmetric", "asymmetric"])
def test_exact_epsilon_per_item_by_enumeration(perturbation):
    sk = SetSketch(epsilon=1.3, buckets=4, levels=4, perturbation=perturbation)   # 16 bits
    items = list(range(40))
    cells = sk.cells(items)
    base = items[:3]
    fresh = next(i for i, c in zip(items, cells) if c not in set(cells[:3]))
    same = next(i for i, c in zip(items[3:], cells[3:]) if c == cells[0])
    measured = max(exact_epsilon(sk.output_distribution, [base, base + [fresh]]),
                   exact_epsilon(sk.output_distribution, [[], [fresh]]))
    assert measured == pytest.approx(1.3, rel=1e-9) or perturbation == "asymmetric" and measured <= 1.3 + 1e-9
    assert exact_epsilon(sk.output_distribution, [base, base + [same]]) == 0.0
    p, q = item_probabilities(1.3, perturbation)
    assert max(math.log(p / q), math.log((1 - q) / (1 - p))) == pytest.approx(1.3)


def test_reports_sums_and_merge():
    sk = SetSketch(epsilon=2.0, buckets=64, levels=8)
    one = sk.privatize({1, 2, 3}, rng=1)
    assert one.shape == (64,) and one.dtype == np.uint8
    many = sk.privatize_sets([{1, 2}, [], range(100)], rng=2)
    assert many.shape == (3, 64)
    agg = sk.aggregate(one) + sk.aggregate(many)
    assert isinstance(agg, ColumnSums) and agg.n == 4
    whole = sk.aggregate_batches([one[None], many])      # one batch: the same counts, one identifier
    assert whole.n == agg.n and np.array_equal(whole.counts, agg.counts) and len(whole.batches) == 1
    other = SetSketch(epsilon=1.0, buckets=64, levels=8)
    with pytest.raises(IncompatibleError):
        agg + other.aggregate(other.privatize([1], rng=0))
    with pytest.raises(IncompatibleError):
        sk.estimate(other.empty_aggregate().merge(other.aggregate(other.privatize([1], rng=0))))
    with pytest.raises(LDPTypeError):
        sk.privatize("abc")
    with pytest.raises(LDPValueError):
        SetSketch(epsilon=1.0, buckets=100)


def test_report_bits_have_the_stated_law():
    sk = SetSketch(epsilon=1.0, buckets=256, levels=8)
    items = np.arange(300)
    occupied = np.zeros(sk.L, bool)
    occupied[sk.cells(items)] = True
    reports = sk.privatize_sets([items] * 400, rng=5)
    agg = sk.aggregate(reports)
    assert agg == sk.aggregate(reports)
    ones = np.asarray(agg.counts)
    for mask, rate in ((occupied, sk.p), (~occupied, sk.q)):
        n = 400 * mask.sum()
        assert abs(ones[mask].sum() - n * rate) <= 5 * math.sqrt(n * rate * (1 - rate))
    assert sk.occupancy([items], [400]).max() == 400


@pytest.mark.parametrize("parties, shared", [(1, 1.0), (10, 0.0), (10, 1.0)])
def test_estimate_is_close_within_its_error(parties, shared):
    """Mean over seeds within 3 standard errors (of one run) of the truth: the profile MLE of
    several parties carries a bias of the order of one standard error where the nuisance (party
    sizes, overlap) is weakly identified (docs/sets.md); the interval covers in most runs."""
    sk = SetSketch(epsilon=2.0, buckets=1024, levels=16)
    size = 20_000 // parties if shared == 0 else 2_000
    sets = [np.arange(size)] if shared else [np.arange(j * size, (j + 1) * size) for j in range(parties)]
    truth = size * (1 if shared else parties)
    estimates = [sk.estimate(sk.simulate(sets, counts=[parties] if shared else None, rng=seed))
                 for seed in range(12)]
    values = np.array([e.value for e in estimates])
    se = np.mean([e.std_error for e in estimates])
    assert abs(values.mean() - truth) <= (5 / math.sqrt(len(values)) if parties == 1 else 3) * se
    assert sum(e.lower <= truth <= e.upper for e in estimates) >= 9
    assert "per item" in str(estimates[0])


def test_one_party_error_matches_the_cramer_rao_bound():
    sk = SetSketch(epsilon=1.0)
    truth = 200_000
    values = np.array([sk.estimate(sk.simulate([np.arange(truth)], rng=seed)).value for seed in range(12)])
    bound = sk.fisher_information(truth) ** -0.5
    # sd of 12 draws: within a factor 1.6 of the bound either way (chi-square 12 dof, 0.1% tails)
    assert 0.55 * bound <= values.std(ddof=1) <= 1.6 * bound


def test_empty_and_tiny_sets():
    sk = SetSketch(epsilon=4.0)
    est = sk.estimate(sk.aggregate(sk.privatize([], rng=3)))
    assert est.lower == 0.0 and est.upper < 50
    est = sk.estimate(sk.aggregate(sk.privatize_sets([[1]] * 20, rng=3)))
    assert est.lower <= 1 <= est.upper


def test_sums_and_reports_files_round_trip():
    from bfrrce.io import formats
    sk = SetSketch(epsilon=2.0, buckets=64, levels=8)
    reports = sk.privatize_sets([[1, 2], [3]], rng=1)
    mech, again, _ = formats.load_reports(formats.dump_reports(sk, reports))
    assert mech == sk and (again == reports).all()
    agg = formats.add_file(sk.empty_aggregate(), formats.dump_reports(sk, reports))
    assert formats.load_column_sums(formats.dump_column_sums(agg)) == agg
    with pytest.raises(IncompatibleError):
        formats.load_column_sums(formats.dump_column_sums(agg), SetSketch(epsilon=1.0, buckets=64, levels=8))


def test_intersection_within_its_error():
    """Fresh items every run (the hash's luck is part of the error): mean within 5 se/√runs,
    se within a factor 2 of the spread."""
    sk = SetSketch(epsilon=4.0, buckets=1024, levels=16)
    estimates = []
    for run in range(10):
        base = run * 10 ** 6
        a, b = np.arange(base, base + 3000), np.arange(base + 1000, base + 4000)      # |A ∩ B| = 2000
        reports = sk.privatize_sets([a, b], rng=run)
        estimates.append(sk.intersection(sk.aggregate(reports[0]), sk.aggregate(reports[1])))
    values = np.array([e.value for e in estimates])
    se = np.mean([e.std_error for e in estimates])
    assert abs(values.mean() - 2000) <= 5 * se / math.sqrt(len(values))
    assert 0.5 <= se / values.std(ddof=1) <= 2.0
    with pytest.raises(LDPValueError):
        sk.intersection(sk.aggregate(reports), sk.aggregate(reports[0]))


def test_readme_sets_example_prints_what_the_readme_shows(capsys):
    import re
    from pathlib import Path
    text = (Path(__file__).resolve().parents[2] / "README.md").read_text(encoding="utf-8")
    start = text.index("## Counting the union of sets")
    code = re.search(r"```python\n(.*?)```", text[start:], re.DOTALL).group(1)
    exec(compile(code.replace("privatize_sets(parties)", "privatize_sets(parties, rng=0)"), "README.md", "exec"), {})  # noqa: S102
    printed = capsys.readouterr().out
    lower, upper = (float(x.replace(",", "")) for x in re.search(r"\[([\d,.]+), ([\d,.]+)\]", printed).groups())
    assert 100_000 <= lower <= upper <= 120_000          # (its coverage is measured, not tested on one run)
    assert printed.strip() in text


def test_cli_set_job(tmp_path):
    """privatize-set (one party per file) → aggregate → estimate --aggregate."""
    import io

    from bfrrce.cli import main
    for j in range(2):
        (tmp_path / f"p{j}.txt").write_text("".join(f"item{i}\n" for i in range(j * 1000, j * 1000 + 2000)))
        assert main(["privatize-set", str(tmp_path / f"p{j}.txt"), "--epsilon", "4", "--seed", str(j),
                     "--buckets", "512", "--levels", "16", "--out", str(tmp_path / f"p{j}.bfr")], io.StringIO()) == 0
    reports = [str(tmp_path / f"p{j}.bfr") for j in range(2)]
    assert main(["aggregate", *reports, "--out", str(tmp_path / "sums.bfr")], io.StringIO()) == 0
    out, err = io.StringIO(), io.StringIO()
    assert main(["estimate", str(tmp_path / "sums.bfr"), "--aggregate"], out, err) == 0, err.getvalue()
    assert "union of 2 parties' sets" in out.getvalue() and "per item" in out.getvalue()
    assert main(["estimate", str(tmp_path / "sums.bfr"), "--aggregate", "--L", "64"], io.StringIO(), err) == 2
    assert main(["aggregate", reports[0], reports[0], "--out", str(tmp_path / "twice.bfr")],
                io.StringIO(), io.StringIO()) == 2


@pytest.mark.parametrize("epsilon", [1.0, 6.0])
def test_overlap_likelihood_is_its_formula_cell_by_cell(epsilon, monkeypatch):
    """ℓ(N, s, ρ, κ, h) of the overlap model (bfrrce.sets._Overlap, docs/sets.md) equals Σ over
    cells of log Pr[c], Pr[c] = (1 − e^{−sλ})·Bin(c; k, p) + e^{−sλ}·Σ_M Pois(M; λ_U)·Bin(c; k, x_M)
    (ρ = 0: Bin(c; k, q + (p − q)(1 − e^{−(1−s)λ/k})); h > 0: Σ_M Pois(M; (1 − s)λ)·Σ_m
    Pr[m | M]·Pr[c | m], the union of M random h-sets by inclusion–exclusion), written out with
    scipy.stats, up to Σ log C(k, c). Few parties, so every sum is its own bin; λ_U <= 4 (the
    exact sum over M).
    The scaled sums over M and their logarithmic fallback give the same values."""
    from scipy import integrate, stats
    from bfrrce import sets as module
    sk, k = SetSketch(epsilon=epsilon, buckets=64, levels=8), 6
    rng = np.random.default_rng(5)
    counts = rng.binomial(k, rng.uniform(sk.q, sk.p, size=(8, 64)))
    lam = -np.log1p(-sk.pi / sk.buckets)[:, None] * np.ones((8, 64))
    const = stats.binom.logpmf(counts, k, 0.5) - (counts * np.log(0.5) + (k - counts) * np.log(0.5))

    def union_law(holders, items):
        """Pr[m | M] by inclusion–exclusion: Pr[the holders lie in a set of j] = (C(j, h)/C(k, h))^M."""
        inside = [(math.comb(j, holders) / math.comb(k, holders)) ** items for j in range(k + 1)]
        return np.array([math.comb(k, m) * sum((-1) ** (m - j) * math.comb(m, j) * inside[j] for j in range(m + 1))
                         for m in range(k + 1)])

    def direct(union, share, rho, shape=math.inf, holders=0):
        lam_n = union * lam
        rest = (1 - share) * lam_n
        if holders:           # M ~ Poisson(rest) items, each held by h random parties
            given = np.array([[stats.binom.pmf(np.arange(m + 1), m, sk.p) @ stats.binom.pmf(
                c - np.arange(m + 1), k - m, sk.q) for c in range(k + 1)] for m in range(k + 1)])   # (m, c)
            law = sum(stats.poisson.pmf(M, rest)[..., None] * (union_law(holders, M) @ given) for M in range(60))
            own = np.take_along_axis(law, counts[..., None], axis=-1)[..., 0]
        elif rho == 0:        # party j: the mean of the j-th of k equal slices of Gamma(κ), mean 1
            w = np.ones(k)
            if shape < 0:     # or of size ∝ rank^−a, κ = −a
                w = np.arange(1, k + 1) ** shape
                w = w / w.mean()
            elif not math.isinf(shape):
                gamma = stats.gamma(shape, scale=1 / shape)
                w = [k * integrate.quad(lambda v: v * gamma.pdf(v), *gamma.ppf([j / k, (j + 1) / k]))[0]
                     for j in range(k)]
            held = np.mean([-np.expm1(-rest * wj / k) for wj in w], axis=0)
            own = stats.binom.pmf(counts, k, sk.q + (sk.p - sk.q) * held)
        else:
            lam_u = rest / -math.expm1(k * math.log1p(-rho))
            terms = np.arange(60)[:, None, None]
            own = (stats.poisson.pmf(terms, lam_u) * stats.binom.pmf(
                counts, k, sk.q + (sk.p - sk.q) * -np.expm1(terms * math.log1p(-rho)))).sum(axis=0)
        pr = -np.expm1(-share * lam_n) * stats.binom.pmf(counts, k, sk.p) + np.exp(-share * lam_n) * own
        return float((np.log(pr) - const).sum())

    points = [(300.0, 0.0, 0.0), (300.0, 0.3, 0.0), (200.0, 0.2, 0.4), (100.0, 0.0, 0.05), (40.0, 0.5, 1 - 1e-9),
              (300.0, 0.0, 0.0, 0.5), (200.0, 0.25, 0.0, 0.15), (300.0, 0.0, 0.0, 40.0), (300.0, 0.0, 0.0, -1.0),
              (200.0, 0.25, 0.0, -2.5),
              (300.0, 0.0, 0.0, math.inf, 2), (200.0, 0.3, 0.0, math.inf, 3), (300.0, 0.0, 0.0, math.inf, 5)]
    for underflow in (module.UNDERFLOW, math.inf):          # inf: every sum over M in logarithms
        monkeypatch.setattr(module, "UNDERFLOW", underflow)
        model = module._Overlap(sk, counts, k)
        assert model.c.size < counts.size                   # sums grouped, one per (level, sum)
        for union, *theta in points:
            assert model.loglik(np.array([union]), *theta)[0] == pytest.approx(direct(union, *theta),
                                                                              rel=1e-10, abs=1e-8)


@pytest.mark.parametrize("parties", [7, 1000])
def test_holder_tables_match_their_laws(parties):
    """The exact-holders family's tables (bfrrce.sets): Pr[c | m holders] by recursion equals
    Binomial(m, p) + Binomial(k − m, q) (bfrrce.poisoning.weight_pmf) for every m, Pr[m | M] by
    scipy.special.comb steps equals the chain with scipy.stats.hypergeom steps, and the table for
    h needing more rows than one block (h = 10: 631 > HOLDING_ROWS) is the same law."""
    from scipy import stats
    from bfrrce import sets as module
    from bfrrce.poisoning import weight_pmf
    sk = SetSketch(epsilon=0.5)
    rows = min(parties + 1, module.HOLDING_ROWS)
    law = module._sum_given_holding(parties, sk.p, sk.q, rows)
    for m in sorted({0, 1, rows // 2, rows - 1}):
        ref = weight_pmf(parties, m, sk.p, sk.q)
        normal = ref > 1e-290                                # beyond: underflow, read as TINY_RATE
        assert np.allclose(law[m][normal], ref[normal], rtol=1e-11, atol=0) and (law[m][~normal] < 1e-280).all()
    for holders in (2, 10):
        if holders >= parties:
            continue
        chain = module._union_sizes(parties, holders, module.HOLDER_TERMS)
        top = chain.shape[1] - 1
        step = stats.hypergeom.pmf(np.arange(holders + 1)[None, :], parties, parties - np.arange(top + 1)[:, None], holders)
        ref = np.zeros_like(chain)
        ref[0, 0] = 1.0
        for items in range(1, chain.shape[0]):
            for x in range(holders + 1):
                ref[items, x:] += ref[items - 1, :top + 1 - x] * step[:top + 1 - x, x]
        assert np.allclose(chain, ref, rtol=1e-9, atol=1e-300)
        given = np.stack([weight_pmf(parties, m, sk.p, sk.q) for m in range(top + 1)])
        table = module._sum_given_items(parties, holders, sk.p, sk.q, module.HOLDER_TERMS)
        assert np.allclose(table, np.log(np.maximum(chain @ given, module.TINY_RATE)), rtol=1e-9, atol=1e-9)


@pytest.mark.parametrize("parties", [2, 10, 1000])
def test_unequal_party_sizes_cannot_hide_items(parties):
    """The party-size family of the overlap model (docs/sets.md) gives every party a fixed size,
    the same in every cell: a cell holding a private item has at least one holder, so the mean
    holders k·held >= 1 − e^{−rest} however unequal the sizes (κ → 0 puts every item in the
    largest slice, a → ∞ of sizes ∝ rank^−a in the first); κ → ∞ is equal sizes."""
    from bfrrce.sets import _held
    rest = np.logspace(-4, 2, 25)
    for shape in (2.0, 0.15, 1e-3, 1e-12, -0.5, -2.0, -40.0):
        assert np.all(parties * _held(rest, parties, shape) >= -np.expm1(-rest) * (1 - 1e-12))
    assert _held(rest, parties, 1e9) == pytest.approx(-np.expm1(-rest / parties), rel=1e-3)


@pytest.mark.parametrize("parties", [10, 32, 33, 100, 1000, 100_000])
def test_rank_law_sizes_are_the_slices_of_the_exact_sums(parties):
    """Sizes ∝ rank^−a (the size law −a of the overlap model): each of min(k, 32) slices of k/32
    consecutive ranks gets its share of Σ_j j^−a (the cumulative sum read linearly between
    integers, a party split between two slices), against the exact sum over every rank (the
    module sums exactly up to rank 64 and by Euler–Maclaurin beyond, to 10^-8 of a slice; the
    far slices of a steep law are differences of nearly equal sums, so also to 10^-10 of the
    largest size possible, the number of slices); mean 1, decreasing."""
    from bfrrce.sets import SIZE_GROUPS, _rank_sizes
    groups = min(parties, SIZE_GROUPS)
    exponents = np.array([0.0, 0.3, 1.0, 2.0, 2.5, 3.0, 6.0])
    sizes = _rank_sizes(groups, parties, exponents[:, None])
    edges = parties * np.arange(groups + 1) / groups
    for a, got in zip(exponents, sizes):
        total = np.concatenate([[0.0], np.cumsum(np.arange(1.0, parties + 1) ** -a)])
        share = np.diff(np.interp(edges, np.arange(parties + 1), total))
        assert got == pytest.approx(share / share.mean(), rel=1e-8, abs=1e-10 * groups)
        assert got.mean() == pytest.approx(1.0) and np.all(np.diff(got) <= 1e-12)


def test_party_sizes_by_rank_are_read_without_the_gamma_family_s_bias():
    """Ten parties with disjoint sets of sizes ∝ 1/rank at ε = 8 (the union table's "unequal"):
    the Gamma family of sizes cannot take that shape, and with it alone the overlap model read
    such unions low, its interval below the truth; with sizes ∝ rank^−a in the model the mean of 4 runs
    is within 3 of its standard errors (the mean se/2) of the truth and the interval covers in
    at least 3 (a 95% interval misses twice in 4 with probability 0.014)."""
    from benchmarks.sets import occupancy
    from bfrrce import sets as module
    sk, k, truth = SetSketch(epsilon=8.0), 10, 100_000
    values, errors, covered = [], [], 0
    for seed in range(4):
        rng = np.random.default_rng(seed)
        counts = sk.sums_from_occupancy(occupancy(sk, truth, k, "unequal", rng), k, rng).counts
        value, se, (low, high), _ = module._Overlap(sk, counts.reshape(sk.levels, sk.buckets), k).solve(
            module._cut(0.95, k, 2))
        values.append(value)
        errors.append(se)
        covered += low <= truth <= high
    assert abs(np.mean(values) - truth) <= 3 * np.mean(errors) / 2 and covered >= 3


@pytest.mark.parametrize(("epsilon", "parties", "scenario"), [(0.5, 2, "few common"), (1.0, 2, "disjoint"), (4.0, 2, "disjoint"),
                                                          (0.5, 10, "pairs"), (1.0, 30, "few common"), (8.0, 10, "unequal")])
def test_pruned_nuisance_points_leave_the_estimate_as_it_is(epsilon, parties, scenario, monkeypatch):
    """Coarse θ far below the profile in the first window leave the later grids (PRUNED_BELOW):
    the estimate, the overlap model's interval and the fitted θ are those of the full grid, to
    the last bit. In the first three designs keeping only each window point's best θ
    (PRUNED_BELOW = 0) moves the estimate; pairs at ε = 0.5 have two modes within a nat
    (docs/sets.md); in the fifth the model interval moved while grid points outside the window
    were refined from the first θ of the pruned list rather than their own best."""
    from benchmarks.sets import occupancy
    from bfrrce import sets as module
    sk = SetSketch(epsilon=epsilon, buckets=1024, levels=16)
    rng = np.random.default_rng(3)
    sums = sk.sums_from_occupancy(occupancy(sk, 20_000, parties, scenario, rng), parties, rng)
    fitted = ("model_interval", "shared", "holding", "size_shape", "holders")
    pruned = sk.estimate(sums)
    monkeypatch.setattr(module, "PRUNED_BELOW", math.inf)
    full = sk.estimate(sums)
    assert (pruned.value, pruned.interval, *(pruned.details.get(key) for key in fitted)) == \
        (full.value, full.interval, *(full.details.get(key) for key in fitted))


@pytest.mark.parametrize("holders", [2, 3])
def test_items_each_held_by_h_parties(holders):
    """Every item held by exactly h of 10 parties drawn at random (pairs, triples): the overlap
    model's exact-holders family (docs/sets.md) finds h and its likelihood-ratio interval covers
    the truth; the mean over seeds is within 3 standard errors of one run (the families before it
    read such sums as independent holders, whose sums spread more: the profile MLE of pairs rose
    12% above the truth at k = 10, ε = 4)."""
    sk, k, truth = SetSketch(epsilon=4.0, buckets=1024, levels=16), 10, 20_000
    estimates = []
    for seed in range(6):
        rng = np.random.default_rng(seed)
        chosen = rng.random((truth, k)).argsort(axis=1)[:, :holders]        # h distinct parties per item
        sets = [np.flatnonzero((chosen == j).any(axis=1)) for j in range(k)]
        estimates.append(sk.estimate(sk.simulate(sets, rng=rng)))
    values = np.array([e.value for e in estimates])
    assert abs(values.mean() - truth) <= 3 * np.mean([e.std_error for e in estimates])
    assert sum(e.details["holders"] == holders for e in estimates) >= 5
    assert sum(e.details["model_interval"][0] <= truth <= e.details["model_interval"][1] for e in estimates) >= 5
    assert all(e.lower <= truth <= e.upper for e in estimates)


@pytest.mark.parametrize("parties, epsilon, share", [(10, 1.0, 0.01), (100, 1.0, 0.01), (100, 4.0, 0.01),
                                                     (100, 1.0, 0.001)])
def test_a_few_items_held_by_every_party(parties, epsilon, share):
    """A ``share`` of the union held by every party, the rest by one party each: the common items'
    cells stand out (sums near k·p) while each private item moves its cell by p − q, so ℓ is sharp
    in the share s however small. With s on a grid of 0, 0.1, 0.25, … the profile never came near
    the truth and the model's interval excluded it by far (docs/sets.md); with s
    on a log grid down to 0.003 and numbers of common items 1 … 1,000 (docs/sets.md) the mean over
    seeds is within 3 standard errors of one run and the model's interval covers."""
    sk = SetSketch(epsilon=epsilon, buckets=1024, levels=16)
    own = 20_000 // parties
    common = round(own * parties * share / (1 - share))
    truth = common + own * parties
    sets = [np.r_[np.arange(common), common + j * own + np.arange(own)] for j in range(parties)]
    estimates = [sk.estimate(sk.simulate(sets, rng=seed)) for seed in range(6)]
    values = np.array([e.value for e in estimates])
    assert abs(values.mean() - truth) <= 3 * np.mean([e.std_error for e in estimates])
    assert sum(e.details["model_interval"][0] <= truth <= e.details["model_interval"][1] for e in estimates) >= 5
    assert all(e.lower <= truth <= e.upper for e in estimates)


@pytest.mark.parametrize("parties", [6, 300])
def test_likelihood_rows_together_are_the_rows_alone(parties):
    """Nelder–Mead's points are evaluated together (bfrrce.sets._Overlap.loglik_rows: one N and
    one θ per row, grouped by family, matrix products one per row): each row equals loglik at its
    N and θ alone to the last bit, in every family (ρ in (0, 1), ρ = 0 with equal or Gamma sizes,
    ρ = 1, exact holders), with shares 0 and above, at unions small and large enough for the
    quadrature."""
    from bfrrce.sets import _Overlap
    sk = SetSketch(epsilon=1.0, buckets=256, levels=12)
    rng = np.random.default_rng(parties)
    counts = rng.binomial(parties, rng.uniform(sk.q, sk.p, size=(12, 256)))
    model = _Overlap(sk, counts, parties)
    rows = 48
    family = np.arange(rows) % 4
    union = np.exp(rng.uniform(math.log(5.0), math.log(5e5), rows))
    share = np.where(rng.random(rows) < 0.3, 0.0, rng.random(rows))
    rho = np.select([family == 0, family == 2], [rng.uniform(1e-3, 0.99, rows), 1.0], 0.0)
    law = rng.random(rows)            # family 1: Gamma(κ) sizes, sizes ∝ rank^−a (κ = −a) or equal sizes
    shape = np.select([(family == 1) & (law < 0.4), (family == 1) & (law < 0.7)],
                      [rng.uniform(0.1, 5.0, rows), -rng.uniform(0.2, 3.0, rows)], math.inf)
    holders = np.where(family == 3, rng.choice([2, 3, 5], rows), 0)
    together = model.loglik_rows(union, share, rho, shape, holders)
    alone = [model.loglik(union[i:i + 1], share[i], rho[i], shape[i], holders[i])[0] for i in range(rows)]
    assert np.array_equal(together, alone)


@pytest.mark.parametrize("eps, parties, items", [(1.0, 7, 2_000), (0.5, 40, 20_000), (4.0, 100, 100_000)])
def test_rho_rows_together_are_the_rows_alone_on_drawn_unions(eps, parties, items):
    """The ρ family on sums drawn from unions (half common): Nelder–Mead's rows, each with its
    own ρ table, equal the single-ρ likelihood to the last bit, the tables laid out alike for
    both (BLAS rounds a contiguous table and a transposed one differently)."""
    from bfrrce.sets import _Overlap
    from benchmarks.sets import occupancy
    sk = SetSketch(epsilon=eps, buckets=256, levels=12)
    rng = np.random.default_rng(parties)
    agg = sk.sums_from_occupancy(occupancy(sk, items, parties, "half", rng), parties, rng)
    model = _Overlap(sk, agg.counts.reshape(12, 256), parties)
    rows = 40
    union = np.exp(rng.uniform(math.log(5.0), math.log(5e6), rows))
    share, rho = rng.random(rows), rng.uniform(1e-3, 0.99, rows)
    together = model.loglik_rows(union, share, rho, np.full(rows, math.inf), np.zeros(rows, int))
    alone = [model.loglik(union[i:i + 1], share[i], rho[i])[0] for i in range(rows)]
    assert np.array_equal(together, alone)


def test_binomial_table_entries_are_what_it_scaled():
    """_Overlap._binomial_table builds the scaled entries in place and recomputes the entries only
    where a product underflows: the recomputed entries, scaled, are the table's to the last bit
    (here at every sum, the underflowing ones included), and a ρ's own table (_table) is its row
    of the stacked one."""
    from bfrrce.sets import _exp_scaled, _Overlap
    sk = SetSketch(epsilon=4.0, buckets=256, levels=12)
    rng = np.random.default_rng(7)
    counts = rng.binomial(200, rng.uniform(sk.q, sk.p, size=(12, 256)))
    model = _Overlap(sk, counts, 200)
    rho = [0.003, 0.2, 0.9]
    entries, scaled, top, _ = model._binomial_table(rho)
    rows = np.repeat(np.arange(len(rho)), model.sums.size)
    sums = np.tile(np.arange(model.sums.size), len(rho))
    again = _exp_scaled(entries(rows, sums) - top[sums][:, None]).reshape(scaled.shape)
    assert np.array_equal(again, scaled) and (scaled == 0).any()
    one = model._table(0.2)
    assert np.array_equal(one[1], scaled[1])
    assert np.array_equal(one[0](np.arange(5), np.arange(5)), entries(np.ones(5, dtype=int), np.arange(5)))
