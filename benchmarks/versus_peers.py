"""This package against the Python LDP libraries users have today, same workloads, one run.

    pip install -e ".[bench,fast]"    # pure-ldp, multi-freq-ldpy, ldp-toolbox (xxhash < 4); numba
    python -m benchmarks.versus_peers [--n 20000] [--n-small 5000] [--n-large 1000000]
                                      [--repeats 3] [--mechanisms SUE OUE]

Workload: values uniform over d = 1024, ε = 1. Client: privatize every value; server: aggregate
the reports and estimate all d counts. Throughput is users / second. Every library runs on
``--n-small`` and ``--n`` users; ours also on ``--n-large``. The peers process one user per
Python call, so their rate is flat in n (the two sizes show it), while ours grows with n until
per-call costs are amortised. Two ratios per mechanism, against the fastest peer at ``--n``:
ours at the same n ("equal n"), and ours at ``--n-large`` (ours at scale against the peer's
per-user rate). Runs are interleaved (every library and size, for every repeat); medians.
Missing peers are skipped. pure-ldp maps values 1..d by default (its index mapper), so it gets
value + 1. With numba installed our column counts use the compiled kernel, loaded up front
(``BFRRCE_ACCEL=numpy`` for the numpy counter).
"""

import statistics

import numpy as np

import protocols
from benchmarks._common import column_counter, installed_peers, timed, workload_parser


def ours(name, eps, d):
    cls = {"GRR": protocols.GRR, "SUE": protocols.SUE, "OUE": protocols.OUE, "OLH": protocols.OLH,
           "THE": protocols.THE, "HR": protocols.HadamardResponse, "SS": protocols.SubsetSelection}[name]
    mech = cls(epsilon=eps, d=d)
    return (lambda v: mech.privatize(v, rng=1)), (lambda r: mech.estimate(mech.aggregate(r)))


def pure_ldp(name, eps, d):
    from pure_ldp.frequency_oracles import (DEClient, DEServer, HadamardResponseClient,
                                            HadamardResponseServer, HEClient, HEServer, LHClient,
                                            LHServer, UEClient, UEServer)
    if name == "GRR":
        c, s = DEClient(eps, d), DEServer(eps, d)
    elif name in ("SUE", "OUE"):
        c, s = UEClient(eps, d, use_oue=name == "OUE"), UEServer(eps, d, use_oue=name == "OUE")
    elif name == "OLH":
        c, s = LHClient(eps, d, use_olh=True), LHServer(eps, d, use_olh=True)
    elif name == "THE":
        c, s = HEClient(eps, d), HEServer(eps, d, use_the=True)
    elif name == "HR":
        s = HadamardResponseServer(eps, d)
        c = HadamardResponseClient(eps, d, s.get_hash_funcs())
    else:
        return None

    def server(reports):
        s.reset() if hasattr(s, "reset") else None
        s.aggregate_all(reports)
        return s.estimate_all(range(1, d + 1), suppress_warnings=True)
    return (lambda v: [c.privatise(int(x) + 1) for x in v]), server


def multi_freq(name, eps, d):
    from multi_freq_ldpy.pure_frequency_oracles import GRR, HE, LH, SS, UE
    table = {
        "GRR": (lambda x: GRR.GRR_Client(x, d, eps), lambda r: GRR.GRR_Aggregator_MI(r, d, eps)),
        "SUE": (lambda x: UE.UE_Client(x, d, eps, False), lambda r: UE.UE_Aggregator_MI(r, eps, False)),
        "OUE": (lambda x: UE.UE_Client(x, d, eps, True), lambda r: UE.UE_Aggregator_MI(r, eps, True)),
        "OLH": (lambda x: LH.LH_Client(x, d, eps, True), lambda r: LH.LH_Aggregator_MI(r, d, eps, True)),
        "THE": (lambda x: HE.HE_Client(x, d, eps), lambda r: HE.HE_Aggregator_MI(r, d, eps, True)),
        "SS": (lambda x: SS.SS_Client(x, d, eps), lambda r: SS.SS_Aggregator_MI(r, d, eps)),
    }
    if name not in table:
        return None
    client, server = table[name]
    return (lambda v: [client(int(x)) for x in v]), server


def ldp_toolbox(name, eps, d):
    from ldp_toolbox.protocols.frequency import grr, he, lh, ss, ue
    build = {"GRR": lambda: grr.GeneralizedRandomizedResponse(d, eps),
             "SUE": lambda: ue.UnaryEncoding(d, eps, optimal=False),
             "OUE": lambda: ue.UnaryEncoding(d, eps, optimal=True),
             "OLH": lambda: lh.LocalHashing(d, eps, optimal=True),
             "THE": lambda: he.HistogramEncoding(d, eps, thresholding=True),
             "SS": lambda: ss.SubsetSelection(d, eps)}
    if name not in build:
        return None
    mech = build[name]()
    return (lambda v: [mech.obfuscate(int(x)) for x in v]), (lambda r: mech.estimate(r))


PEERS = {"pure-ldp": pure_ldp, "multi-freq-ldpy": multi_freq, "ldp-toolbox": ldp_toolbox}
MECHANISMS = ("GRR", "SUE", "OUE", "OLH", "THE", "HR", "SS")


def rates(runners, sizes, repeats):
    """Median (client, server) users/s of every library at each of its sizes, interleaved,
    after one untimed run of each on 50 users (imports and caches of first calls)."""
    for client, server, values in runners.values():
        server(client(values[:50]))
    times = {(lib, n): ([], []) for lib in runners for n in sizes[lib]}
    for _ in range(repeats):
        for (lib, n), (client_rates, server_rates) in times.items():
            client, server, values = runners[lib]
            reports, tc = timed(client, values[:n])
            _, ts = timed(server, reports)
            client_rates.append(n / tc)
            server_rates.append(n / ts)
    return {key: tuple(statistics.median(r) for r in pair) for key, pair in times.items()}


def versus_fastest(peers, equal, large, side):
    """The fastest peer's rate (side 0: client, 1: server), its name, and our two ratios."""
    best = max(peers, key=lambda lib: peers[lib][side])
    rate = peers[best][side]
    return f"{rate:13,.0f} {best:16} {equal[side] / rate:8.1f} {large[side] / rate:8.1f}"


def main(argv=None):
    ap = workload_parser(__doc__)
    ap.set_defaults(n=20_000)
    ap.add_argument("--n-small", type=int, default=5_000)
    ap.add_argument("--n-large", type=int, default=1_000_000)
    ap.add_argument("--mechanisms", nargs="+", choices=MECHANISMS, default=list(MECHANISMS))
    args = ap.parse_args(argv)
    counter = column_counter()
    values = np.random.default_rng(0).integers(0, args.d, max(args.n, args.n_large))
    print(f"d={args.d} epsilon={args.epsilon}; median of {args.repeats} interleaved runs; "
          f"column counts: {counter}")
    print(f"{'mechanism':9} {'library':16} {'n':>9} {'client/s':>13} {'server/s':>13}")
    summary = []
    for name in args.mechanisms:
        runners = {"bfrrce.protocols": (*ours(name, args.epsilon, args.d), values)}
        for peer, pair in installed_peers(PEERS, name, args.epsilon, args.d).items():
            runners[peer] = (*pair, values)
        sizes = {lib: (args.n_small, args.n) for lib in runners}
        sizes["bfrrce.protocols"] += (args.n_large,)
        measured = rates(runners, sizes, args.repeats)
        for (lib, n), (c, s) in measured.items():
            print(f"{name:9} {lib:16} {n:9,d} {c:13,.0f} {s:13,.0f}")
        peers = {lib: measured[lib, args.n] for lib in runners if lib != "bfrrce.protocols"}
        if peers:
            ours_at = (measured["bfrrce.protocols", args.n], measured["bfrrce.protocols", args.n_large])
            summary.append(f"{name:9} {versus_fastest(peers, *ours_at, 0)} "
                           f"{versus_fastest(peers, *ours_at, 1)}")
    print(f"\nours / fastest peer at n={args.n:,}: 'equal n' = ours at n={args.n:,}, "
          f"'at scale' = ours at n={args.n_large:,}")
    print(f"{'':9} {'peer client/s':>13} {'fastest peer':16} {'equal n':>8} {'at scale':>8} "
          f"{'peer server/s':>13} {'fastest peer':16} {'equal n':>8} {'at scale':>8}")
    print("\n".join(summary))


if __name__ == "__main__":
    main()
