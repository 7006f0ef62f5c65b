"""Command line.

``python -m bfrrce evaluate``: AARE of the estimators across ε on a dataset.
``python -m bfrrce estimate FILE --column C --epsilon E``: privatize every row, aggregate, estimate.
The same job split as a deployment runs it: ``privatize`` (clients: a report file),
``aggregate`` (server: report files → one column-sums file, streamed), and
``estimate --aggregate SUMS``.

Errors are one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from protocols.errors import LDPError

from .datasets import load as load_dataset
from .evaluation import METHODS, evaluate, format_table, write_outputs
from .io.formats import dump_column_sums, load_column_sums
from .io.pipeline import file_sums, privatize_file
from .io.stream import aggregate_files
from .io.values import read_values
from .mechanism import BFRRCE


class CLIError(LDPError):
    """A command line that cannot run (bad arguments, unknown method or dataset)."""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise CLIError(message)


def _floats(text):
    try:
        values = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a comma-separated list of numbers: {text!r}") from None
    if not values or any(not np.isfinite(v) or v <= 0 for v in values):
        raise argparse.ArgumentTypeError(f"epsilons must be finite and > 0: {text!r}")
    return values


def _parser():
    ap = _Parser(prog="python -m bfrrce", description="Distinct counting under local differential privacy.")
    sub = ap.add_subparsers(dest="command", required=True)
    ev = sub.add_parser("evaluate", help="AARE of the estimators across ε on a dataset")
    ev.add_argument("--dataset", default="synthetic-1", help="synthetic-1, synthetic-2, bitcoin or a file")
    ev.add_argument("--column", help="column of a CSV/TSV/Parquet file")
    ev.add_argument("--epsilons", type=_floats, default=[0.5, 1, 2, 4, 8])
    ev.add_argument("--trials", type=int, default=50)
    ev.add_argument("--methods", default="paper,corrected,fill",
                    help="comma-separated: paper, paper-perbit, corrected, fill")
    ev.add_argument("--L", type=int, default=1024)
    ev.add_argument("--l", type=int, default=1, help="hashes for corrected and fill")
    ev.add_argument("--paper-l", type=int, default=3, help="hashes for the paper methods")
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--out", help="folder for results.csv, results.json and aare.png")
    ev.add_argument("--simulate", choices=("exact", "binomial"), default="binomial")
    ev.add_argument("--bitcoin-path", help="block folder or export for --dataset bitcoin")
    es = sub.add_parser("estimate", help="privatize every row of a file as its user would, then estimate")
    es.add_argument("file", help="values (CSV, TSV, Parquet, text), or column sums with --aggregate")
    es.add_argument("--aggregate", action="store_true",
                    help="FILE is a column-sums file written by 'aggregate' (parameters come from it)")
    es.add_argument("--candidates", help="file of candidate values, one per line")
    es.add_argument("--method", default="auto", choices=("auto", "paper", "corrected", "fill"))
    es.add_argument("--reports", action="store_true",
                    help="privatize every row (secure randomness unless --seed) and count the "
                         "reports; default: draw the column sums from their exact law given the rows' "
                         "filters (the same law; O(L) draws from an OS-seeded numpy Generator)")
    pv = sub.add_parser("privatize", help="write one report per row of a file (what each client sends)")
    pv.add_argument("file")
    pv.add_argument("--out", required=True, help="report file to write")
    for parser in (es, pv):
        parser.add_argument("--column")
        parser.add_argument("--epsilon", type=float)
        parser.add_argument("--L", type=int, default=1024)
        parser.add_argument("--l", type=int, default=1)
        parser.add_argument("--seed", type=int, help="seed for a reproducible simulation (default: OS CSPRNG)")
    ag = sub.add_parser("aggregate", help="sum report files (streamed) into one column-sums file")
    ag.add_argument("reports", nargs="+")
    ag.add_argument("--out", required=True, help="column-sums file to write")
    return ap


def _evaluate(args, out):
    methods = [m.strip() for m in args.methods.split(",") if m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise CLIError(f"unknown method {unknown[0]!r}: choose from {', '.join(METHODS)}")
    options = {}
    if args.dataset == "bitcoin" and args.bitcoin_path:
        options["path"] = args.bitcoin_path
    if args.column:
        options["column"] = args.column
    try:
        data = load_dataset(args.dataset, **options)
    except FileNotFoundError as exc:
        raise CLIError(str(exc)) from None
    candidates = data.candidates
    if candidates is None and any(m != "fill" for m in methods):
        candidates = np.unique(data.values)           # oracle domain: the distinct values themselves
        domain_note = "candidates: the true distinct values (an oracle domain, favourable to candidate methods)"
    else:
        domain_note = "candidates: the dataset's domain" if candidates is not None else ""
    start = time.perf_counter()
    rows = evaluate(data.values, args.epsilons, methods, args.trials, args.L, args.l, args.paper_l,
                    args.seed, args.simulate, candidates, data.name)
    elapsed = time.perf_counter() - start
    title = (f"{data.name}: n={data.n:,}, D={data.cardinality:,}; L={args.L}, l={args.l}, "
             f"paper l={args.paper_l}; {args.trials} trials, seed {args.seed}, {args.simulate}")
    print(title, file=out)
    print(data.description + (f"; {domain_note}" if domain_note else ""), file=out)
    print(format_table(rows), file=out)
    print("f50: users a value needs to be detected with probability 1/2; 'D above f50' is the "
          "number of distinct values at or above it, the estimable target (DESIGN §3).", file=out)
    print(f"wall time {elapsed:.1f} s", file=out)
    if args.out:
        written = write_outputs(rows, args.out, title)
        for path in written:
            print(f"wrote {path}", file=out)
        if not any(str(path).endswith(".png") for path in written):
            print("no plot: matplotlib is not installed (pip install 'bfrrce[plot]')", file=out)


def _mechanism(args):
    if args.epsilon is None:
        raise CLIError("--epsilon is required")
    return BFRRCE(epsilon=args.epsilon, L=args.L, l=args.l)


def _estimate(args, out):
    if args.aggregate:
        agg = load_column_sums(Path(args.file).read_bytes())
        mech = agg.mechanism
    else:                                        # streamed: memory independent of the rows
        mech = _mechanism(args)
        agg = file_sums(mech, args.file, args.column, rng=args.seed, reports=args.reports)
    candidates = read_values(args.candidates) if args.candidates else None
    print(mech.estimate(agg, candidates=candidates, method=args.method), file=out)


def _privatize(args, out):
    mech = _mechanism(args)
    n = privatize_file(mech, args.file, args.out, args.column, rng=args.seed)
    print(f"wrote {n:,} reports ({mech!r}) to {args.out}", file=out)


def _aggregate(args, out):
    agg = aggregate_files(args.reports, progress=True)
    Path(args.out).write_bytes(dump_column_sums(agg))
    print(f"wrote column sums of {agg.n:,} reports from {len(agg.batches)} batch(es) to {args.out}",
          file=out)


def main(argv=None, out=None, err=None):
    """Run the CLI; returns the exit status (0, or 2 on any error)."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        args = _parser().parse_args(argv)
        {"evaluate": _evaluate, "estimate": _estimate, "privatize": _privatize,
         "aggregate": _aggregate}[args.command](args, out)
    except (LDPError, ValueError, OSError) as exc:       # ValueError: numpy and argparse conversions
        print(f"bfrrce: error: {exc}", file=err)
        return 2
    return 0
