"""The deployed mechanisms (Apple's CMS/HCMS, Microsoft's dBitFlip) against their peer implementations,
and the measured MSE / analytic variance of every mechanism of issue 15.

    pip install -e ".[bench]"       # pure-ldp (CMS, HCMS), multi-freq-ldpy (dBitFlipPM)
    python -m benchmarks.deployed_peers [--n 20000] [--d 1024] [--epsilon 1] [--repeats 3] [--trials 300]

Peers: every library runs the same n users (equal n), values drawn with Zipf weights 1/(v + 1)
over d. Client: privatize every value; server: aggregate and estimate all d counts. Runs are
interleaved and medians printed, with the ratio ours / peer of users per second. Accuracy: the
root-mean-square error over the d counts divided by the analytic standard deviation (rms sd):
about 1 for both libraries when they implement the same mechanism. multi-freq-ldpy's dBitFlipPM
clips and renormalises its histogram, so ours is also shown post-processed the same way
("ours, clipped": same timings, the clipping is not timed).
Missing peers are skipped.

Variance ratios: MSE / analytic variance of our estimates over ``--trials`` independent runs
(fresh randomness, and fresh hash functions for the sketches), pooled over the values, with a
standard error from the sample kurtosis.
"""

import statistics

import numpy as np

import protocols
from benchmarks._common import installed_peers, timed, workload_parser

SKETCH = dict(k=64, m=1024)
BITS = 4                         # dBitFlip: buckets reported per user


def ours(name, eps, d):
    if name == "dBitFlip":
        mech = protocols.DBitFlip(epsilon=eps, d=d, num_bits=BITS)
    else:
        mech = getattr(protocols, name)(epsilon=eps, d=d, **SKETCH)
    return mech, (lambda v: mech.privatize(v, rng=1)), (lambda r: mech.estimate(mech.aggregate(r)))


def pure_ldp(name, eps, d):
    if name not in ("CMS", "HCMS"):
        return None
    from pure_ldp.core import FreqOracleServer
    from pure_ldp.frequency_oracles import CMSClient, CMSServer
    # pure-ldp 1.2.0's CMSServer passes d=None to np.zeros, which numpy refuses: d=0 while it is built
    original = FreqOracleServer.__init__
    FreqOracleServer.__init__ = lambda self, epsilon, d, index_mapper=None: original(
        self, epsilon, 0 if d is None else d, index_mapper)
    try:
        server = CMSServer(eps, SKETCH["k"], SKETCH["m"], is_hadamard=name == "HCMS")
    finally:
        FreqOracleServer.__init__ = original
    client = CMSClient(eps, server.get_hash_funcs(), SKETCH["m"], is_hadamard=name == "HCMS")

    def estimate(reports):
        server.reset()
        server.aggregate_all(reports)
        return np.array(server.estimate_all(range(d), suppress_warnings=True))
    return (lambda v: [client.privatise(int(x)) for x in v]), estimate


def multi_freq(name, eps, d):
    if name != "dBitFlip":
        return None
    from multi_freq_ldpy.long_freq_est.dBitFlipPM import dBitFlipPM_Aggregator_MI, dBitFlipPM_Client
    return ((lambda v: [dBitFlipPM_Client(int(x), d, d, BITS, eps) for x in v]),
            (lambda r: dBitFlipPM_Aggregator_MI(r, d, BITS, eps) * len(r)))


PEERS = {"pure-ldp": pure_ldp, "multi-freq-ldpy": multi_freq}


def clip_normalise(counts):
    """multi-freq-ldpy's post-processing: negative counts to 0, then rescaled to sum n."""
    c = np.clip(counts, 0, None)
    return c * (counts.sum() / c.sum())


def compare_peers(args, values, truth):
    print(f"peers: n={args.n} users each, d={args.d}, epsilon={args.epsilon}, sketches k={SKETCH['k']} "
          f"m={SKETCH['m']}, dBitFlip num_bits={BITS}; median of {args.repeats} interleaved runs")
    print(f"{'mechanism':9} {'library':16} {'client/s':>11} {'server/s':>11} {'client x':>9} "
          f"{'server x':>9} {'rms err/sd':>10}")
    for name in ("CMS", "HCMS", "dBitFlip"):
        mech, client, server = ours(name, args.epsilon, args.d)
        runners = {"bfrrce.protocols": (client, server), **installed_peers(PEERS, name, args.epsilon, args.d)}
        rates = {lib: ([], []) for lib in runners}
        estimates = {}
        for _ in range(args.repeats):
            for lib, (client_fn, server_fn) in runners.items():
                reports, tc = timed(client_fn, values)
                estimates[lib], ts = timed(server_fn, reports)
                rates[lib][0].append(args.n / tc)
                rates[lib][1].append(args.n / ts)
        if name == "dBitFlip":       # the peer's histogram is clipped: ours clipped alike, a row of its own
            sd = np.sqrt(np.mean([mech.variance(args.n, f) for f in truth / args.n]))
            estimates["ours, clipped"] = clip_normalise(estimates["bfrrce.protocols"])
            rates["ours, clipped"] = rates["bfrrce.protocols"]
        else:
            sd = np.sqrt(np.mean(mech.variances(truth)))
        base_c, base_s = (statistics.median(x) for x in rates["bfrrce.protocols"])
        for lib, (client_rates, server_rates) in rates.items():
            c, s = statistics.median(client_rates), statistics.median(server_rates)
            mine = lib in ("bfrrce.protocols", "ours, clipped")
            ratio = " " * 19 if mine else f"{base_c / c:9.0f} {base_s / s:9.0f}"
            rms = np.sqrt(np.mean((estimates[lib] - truth) ** 2)) / sd
            print(f"{name:9} {lib:16} {c:11,.0f} {s:11,.0f} {ratio} {rms:10.2f}")


def pooled_ratio(estimates, truth, variance):
    """Mean over trials of the squared errors / variance averaged over the values, and its standard
    error from the spread of the per-trial averages (which keeps the correlation between values)."""
    per_trial = np.mean((estimates - truth) ** 2 / variance, axis=1)
    return per_trial.mean(), per_trial.std(ddof=1) / np.sqrt(len(per_trial))


def variance_ratios(args):
    trials, eps = args.trials, args.epsilon
    d, n = 64, 20_000
    weights = 1 / np.arange(1, d + 1)
    truth = np.random.default_rng(0).multinomial(n, weights / weights.sum())
    values = np.repeat(np.arange(d), truth)
    x = np.linspace(0, 100, n)
    print(f"\nMSE / analytic variance over {trials} trials (epsilon={eps}; histograms: d={d}, n={n}, "
          f"Zipf; means: n={n} values evenly spread on [0, 100])")
    rows = []
    for m, k in ((16, 4), (256, 16)):
        make = lambda s: protocols.CMS(epsilon=eps, d=d, k=k, m=m, seed=s)  # noqa: E731
        est = np.array([make(s).estimate(make(s).simulate(np.arange(truth.size), counts=truth, rng=s)) for s in range(trials)])
        rows.append((f"CMS k={k} m={m} (exact simulation)", est, truth, make(0).variances(truth)))
        make = lambda s: protocols.HCMS(epsilon=eps, d=d, k=k, m=m, seed=s)  # noqa: E731
        est = np.array([make(s).estimate(make(s).aggregate(make(s).privatize(values, rng=s)))
                        for s in range(trials)])
        rows.append((f"HCMS k={k} m={m} (reports)", est, truth, make(0).variances(truth)))
    for cls in (protocols.DBitFlip, protocols.MemoizedDBitFlip):
        mech = cls(epsilon=eps, d=d, num_bits=BITS)
        est = np.array([mech.estimate(mech.aggregate(mech.privatize(values, rng=s))) for s in range(trials)])
        rows.append((f"{cls.__name__} num_bits={BITS}", est, truth,
                     np.array([mech.variance(n, f) for f in truth / n])))
    for cls in (protocols.OneBitMean, protocols.MemoizedOneBitMean):
        mech = cls(epsilon=eps, high=100.0)
        est = np.array([[mech.estimate(mech.aggregate(mech.privatize(x, rng=s)))] for s in range(trials)])
        rows.append((cls.__name__, est, np.array([x.mean()]), np.array([mech.population_variance(x)])))
    for label, est, t, var in rows:
        ratio, se = pooled_ratio(est, t, var)
        print(f"{label:34} {ratio:6.3f} ± {se:.3f}")


def main(argv=None):
    ap = workload_parser(__doc__)
    ap.set_defaults(n=20_000)
    ap.add_argument("--trials", type=int, default=300)
    args = ap.parse_args(argv)
    weights = 1 / np.arange(1, args.d + 1)
    values = np.random.default_rng(0).choice(args.d, size=args.n, p=weights / weights.sum())
    compare_peers(args, values, np.bincount(values, minlength=args.d))
    if args.trials:
        variance_ratios(args)


if __name__ == "__main__":
    main()
