"""This package against the Python LDP libraries users have today, same workloads, one run.

    pip install -e ".[bench]"       # pure-ldp, multi-freq-ldpy, ldp-toolbox (xxhash < 4)
    python -m benchmarks.versus_peers [--n 100000] [--peer-n 2000] [--repeats 3]

Workload: values uniform over d = 1024, ε = 1. Client: privatize every value; server: aggregate
the reports and estimate all d counts. Our mechanisms run on n users; the peers process one user
per Python call, so their cost is linear in n and they run on ``--peer-n`` users of the same
workload (throughput = users / second either way). Runs are interleaved (ours, then each peer,
for every repeat) and the medians are printed with the ratio ours / peer. Missing peers are
skipped. pure-ldp maps values 1..d by default (its index mapper), so it gets value + 1.
"""

import statistics

import numpy as np

from benchmarks._common import timed, workload_parser
import protocols


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


def main(argv=None):
    ap = workload_parser(__doc__)
    ap.add_argument("--peer-n", type=int, default=2_000)
    args = ap.parse_args(argv)
    values = np.random.default_rng(0).integers(0, args.d, args.n)
    print(f"d={args.d} epsilon={args.epsilon}; ours on n={args.n}, peers on n={args.peer_n}; "
          f"median of {args.repeats} interleaved runs")
    print(f"{'mechanism':9} {'library':16} {'client/s':>13} {'server/s':>13} {'client x':>9} {'server x':>9}")
    for name in MECHANISMS:
        runners = {"bfrrce.protocols": (ours(name, args.epsilon, args.d), values)}
        for peer, factory in PEERS.items():
            try:
                pair = factory(name, args.epsilon, args.d)
            except ImportError:
                pair = None
            if pair is not None:
                runners[peer] = (pair, values[:args.peer_n])
        times = {lib: ([], []) for lib in runners}
        for _ in range(args.repeats):
            for lib, ((client, server), data) in runners.items():
                reports, tc = timed(client, data)
                _, ts = timed(server, reports)
                times[lib][0].append(len(data) / tc)
                times[lib][1].append(len(data) / ts)
        base_c, base_s = (statistics.median(x) for x in times["bfrrce.protocols"])
        for lib, (client_rates, server_rates) in times.items():
            c, s = statistics.median(client_rates), statistics.median(server_rates)
            ratio = "" if lib == "bfrrce.protocols" else f"{base_c / c:9.0f} {base_s / s:9.0f}"
            print(f"{name:9} {lib:16} {c:13,.0f} {s:13,.0f} {ratio}")


if __name__ == "__main__":
    main()
