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
import csv
import math
import sys
import time
import zlib
from pathlib import Path

import numpy as np

from protocols.core.randomness import SEEDED_WARNING
from protocols.errors import LDPError

from .calibration import PERTURBATIONS
from .datasets import load as load_dataset
from .evaluation import (LEGEND, METHODS, THRESHOLDS, check_evaluation_outputs, evaluate, figure_name,
                         format_table, write_outputs)
from .io.atomic import check_outputs, write_atomic
from .io import values as value_files
from .io.formats import dump_column_sums, read_column_sums_file
from .io.pipeline import file_sums, privatize_file
from .io.stream import Screen, aggregate_files
from .io.values import read_values
from .manipulation import robust_interval
from .mechanism import BFRRCE


DEFAULT_L, DEFAULT_HASHES = 1024, 1
FAILURES = (LDPError, ValueError, OSError, EOFError, csv.Error, zlib.error,  # ValueError: numpy, argparse
            MemoryError)


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


def _options(text):
    """``key=value,...`` as a dict, values as int, float or text."""
    options = {}
    for item in filter(None, (x.strip() for x in text.split(","))):
        key, sep, value = item.partition("=")
        if not sep or not key:
            raise argparse.ArgumentTypeError(f"not key=value: {item!r}")
        for kind in (int, float, str):
            try:
                options[key.strip()] = kind(value.strip())
                break
            except ValueError:
                pass
        if isinstance(options[key.strip()], float) and not math.isfinite(options[key.strip()]):
            raise argparse.ArgumentTypeError(f"{key.strip()} must be a finite number, got {value.strip()!r}")
    return options


def _parser():
    ap = _Parser(prog="python -m bfrrce", description="Distinct counting under local differential privacy.")
    sub = ap.add_subparsers(dest="command", required=True)
    ev = sub.add_parser(
        "evaluate", formatter_class=argparse.RawDescriptionHelpFormatter,
        help="AARE, bounds and coverage of the estimators across ε on a dataset",
        description="AARE (mean |estimate - D|/D over simulated collections), the median 95% bounds "
                    "and their coverage of the true D, for each method and ε. corrected and fill take "
                    "L, l and the perturbation from suggest_parameters for the data's n and each ε, "
                    "given only that D lies in 1..n (or from --L, --l, --perturbation); paper is the "
                    "paper's threshold baseline with its own L, l and membership rule.",
        epilog="membership rules of the paper method (--threshold):\n" + "\n".join(
            f"  {name:5} {text}" for name, text in THRESHOLDS.items()) +
        "\n\n--paper: the paper's experiment: synthetic-1 and synthetic-2, per-bit ε 0.1, 0.2, ..., 1.0 "
        "(RR_P = e^ε/(1+e^ε)),\n  the paper method with each rule given, and the package's corrected "
        "estimator at the same user-level ε = 2l·ε.")
    ev.add_argument("--dataset", default="synthetic-1",
                    help="synthetic-1, synthetic-2, synthetic (see --synthetic), bitcoin or a file")
    ev.add_argument("--synthetic", type=_options, default={},
                    help="with --dataset synthetic: comma-separated key=value of n, cardinality, domain, "
                         "distribution (uniform, zipf), s, seed, e.g. "
                         "n=1000000,cardinality=1000,distribution=zipf,s=1.1")
    ev.add_argument("--L", type=int, help="bits of corrected and fill (default: the advisor's choice)")
    ev.add_argument("--l", type=int, help="hashes of corrected and fill (default: the advisor's choice)")
    ev.add_argument("--perturbation", choices=PERTURBATIONS,
                    help="perturbation of corrected and fill (default: the advisor's choice)")
    ev.add_argument("--column", help="column of a CSV/TSV/Parquet file")
    ev.add_argument("--paper", action="store_true", help="reproduce the paper's experiment (see below)")
    ev.add_argument("--epsilons", type=_floats,
                    help="user-level ε (default 0.5,1,2,4,8); with --paper the per-bit ε (default 0.1,...,1.0)")
    ev.add_argument("--trials", type=int, default=50)
    ev.add_argument("--methods", help=f"comma-separated of {', '.join(METHODS)} (default: all; --paper: "
                    "paper,corrected)")
    ev.add_argument("--threshold", default="z95",
                    help=f"membership rules of the paper method, comma-separated of {', '.join(THRESHOLDS)} "
                         "(default z95)")
    ev.add_argument("--paper-L", type=int, default=1024, help="bits of the paper method's filter (default 1024)")
    ev.add_argument("--paper-l", type=int, default=1, help="hashes of the paper method (default 1)")
    ev.add_argument("--seed", type=int, default=0)
    ev.add_argument("--out", help="folder for results.csv, results.json and the figure")
    ev.add_argument("--html", action="store_true", help="with --out: also report.html, one self-contained page")
    ev.add_argument("--simulate", choices=("exact", "binomial"), default="binomial",
                    help="binomial: column sums drawn exactly in distribution (default); exact: every report")
    ev.add_argument("--bitcoin-path", help="block folder or export for --dataset bitcoin")
    es = sub.add_parser("estimate", help="privatize every row of a file as its user would, then estimate")
    es.add_argument("file", help="values (CSV, TSV, Parquet, text), or column sums with --aggregate")
    es.add_argument("--aggregate", action="store_true",
                    help="FILE is a column-sums file written by 'aggregate' (parameters come from it)")
    es.add_argument("--candidates", help="file of candidate values, one per line")
    es.add_argument("--method", default="auto", choices=("auto", "paper", "corrected", "fill"))
    es.add_argument("--max-fake", type=float,
                    help="also print the interval valid whatever up to this fraction of the reports, "
                         "if fake, sent (docs/manipulation.md)")
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
        parser.add_argument("--L", type=int, help=f"bits per filter (default {DEFAULT_L})")
        parser.add_argument("--l", type=int, help=f"hashes per value (default {DEFAULT_HASHES})")
        parser.add_argument("--max-value", type=int, default=value_files.DEFAULT_MAX_VALUE,
                            help="longest value, line, cell or header read, in bytes "
                                 f"(default {value_files.DEFAULT_MAX_VALUE:,})")
        parser.add_argument("--seed", type=int, help="seed for a reproducible simulation (default: a ChaCha20 stream keyed from os.urandom); "
                            "seeded noise is replayable: privatize marks its file seeded")
    ag = sub.add_parser("aggregate", help="sum report files (streamed) into one column-sums file")
    ag.add_argument("reports", nargs="+")
    ag.add_argument("--out", required=True, help="column-sums file to write")
    ag.add_argument("--screen", action="store_true",
                    help="drop reports of implausible weight while streaming and say how many (bfrrce.poisoning)")
    ag.add_argument("--screen-alpha", type=float, default=1e-3,
                    help="largest probability that the screen drops an honest report (default 0.001)")
    for parser in (es, ag):
        parser.add_argument("--allow-seeded", action="store_true",
                            help="accept files of seeded (replayable) noise, for demonstrations and tests")
    return ap


def _evaluate(args, out, err):
    names = ["synthetic-1", "synthetic-2"] if args.paper else [args.dataset]
    if args.methods is not None and not args.methods.strip(", "):
        raise CLIError("--methods is empty: name at least one of " + ", ".join(METHODS))
    methods = [m.strip() for m in (args.methods or ("paper,corrected" if args.paper else ",".join(METHODS))).split(",")
               if m.strip()]
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise CLIError(f"unknown method {unknown[0]!r}: choose from {', '.join(METHODS)}")
    rules = [r.strip() for r in args.threshold.split(",") if r.strip()]
    unknown = [r for r in rules if r not in THRESHOLDS]
    if unknown or not rules:
        raise CLIError(f"unknown threshold rule {(unknown or [''])[0]!r}: choose from {', '.join(THRESHOLDS)}")
    epsilons = args.epsilons or ([round(0.1 * k, 1) for k in range(1, 11)] if args.paper else [0.5, 1, 2, 4, 8])
    options = {}
    if args.dataset == "bitcoin" and args.bitcoin_path:
        options["path"] = args.bitcoin_path
    if args.column:
        options["column"] = args.column
    if args.synthetic:
        if args.dataset != "synthetic" or args.paper:
            raise CLIError("--synthetic goes with --dataset synthetic")
        options.update(args.synthetic)
    fixed = {key: value for key, value in (("L", args.L), ("l", args.l), ("perturbation", args.perturbation))
             if value is not None}
    figure = "aare-paper.png" if args.paper else figure_name(names[0])
    inputs = [p for p in (args.dataset, args.bitcoin_path) if p and Path(p).exists()]
    if args.out:
        check_evaluation_outputs(args.out, figure, args.html, inputs)
    rows, notes = [], []
    start = time.perf_counter()
    for name in names:
        try:
            data = load_dataset(name, **options)
        except FileNotFoundError as exc:
            raise CLIError(str(exc)) from None
        except TypeError as exc:          # an option the dataset does not take
            raise CLIError(f"dataset {name!r}: {exc}") from None
        notes.append(f"{data.name}: {data.description}" + ("" if data.candidates is not None else
                     "; no candidate domain, so only fill runs"))
        rows += evaluate(data.values, epsilons, methods, args.trials, per_bit=args.paper, paper_L=args.paper_L,
                         paper_l=args.paper_l, thresholds=rules, seed=args.seed, simulate=args.simulate,
                         candidates=data.candidates, name=data.name, parameters=fixed)
    elapsed = time.perf_counter() - start
    if args.paper:
        title = (f"The paper's experiment: AARE against the per-bit ε; paper method: L={args.paper_L}, "
                 f"l={args.paper_l}, symmetric, rule {', '.join(rules)}")
    else:
        title = f"{names[0]}: AARE, bounds and coverage across ε"
    notes.append(f"paper: the paper's threshold estimator, symmetric perturbation, L={args.paper_L}, "
                 f"l={args.paper_l}; " + "; ".join(f"rule {r}: {THRESHOLDS[r]}" for r in rules))
    advised = [key for key in ("L", "l", "perturbation") if key not in fixed]
    notes.append("corrected, fill: " + ", ".join(f"{key}={value}" for key, value in fixed.items())
                 + ("; " if fixed and advised else "")
                 + (f"{', '.join(advised)} from suggest_parameters for the data's n and each ε, given only "
                    "1 <= D <= n" if advised else "")
                 + (" (at the user-level ε = 2l·ε per bit)" if args.paper else ""))
    notes.append(f"{args.trials} trials a row, seed {args.seed}, {args.simulate} simulation")
    print(title, file=out)
    for note in notes:
        print(note, file=out)
    for name in dict.fromkeys(r["dataset"] for r in rows):
        print(f"\n{name}", file=out)
        print(format_table([r for r in rows if r["dataset"] == name]), file=out)
    print(LEGEND, file=out)
    print(f"wall time {elapsed:.1f} s", file=out)
    if args.out:
        written = write_outputs(rows, args.out, title, notes, args.html, figure, inputs)
        for path in written:
            print(f"wrote {path}", file=out)
        if not any(str(path).endswith(".png") for path in written):
            print("no figure: matplotlib is not installed (pip install 'bfrrce[plot]')", file=out)


def _mechanism(args):
    if args.epsilon is None:
        raise CLIError("--epsilon is required")
    return BFRRCE(epsilon=args.epsilon, L=DEFAULT_L if args.L is None else args.L,
                  l=DEFAULT_HASHES if args.l is None else args.l)


def _check_fixed(args, mech):
    """Refuse options that a column-sums file fixes (unless they agree) or that cannot apply."""
    for option, given, fixed in (("--epsilon", args.epsilon, mech.epsilon), ("--L", args.L, mech.L),
                                 ("--l", args.l, mech.l)):
        if given is not None and not math.isclose(given, fixed, rel_tol=1e-9):
            raise CLIError(f"{option} {given} contradicts the column-sums file ({option} {fixed}); "
                           "its header fixes the parameters")
    for option, given in (("--column", args.column), ("--seed", args.seed)):
        if given is not None:
            raise CLIError(f"{option} does not apply to a column-sums file (--aggregate)")
    if args.reports:
        raise CLIError("--reports does not apply to a column-sums file (--aggregate): its reports are counted")


def _warn_seeded(args, err):
    if args.seed is not None:
        print(f"bfrrce: warning: --seed: {SEEDED_WARNING}", file=err)


def _estimate(args, out, err):
    if args.aggregate:
        agg = read_column_sums_file(args.file, allow_seeded=args.allow_seeded)
        mech = agg.mechanism
        _check_fixed(args, mech)
    if args.candidates and args.method == "fill":
        raise CLIError("--candidates does not apply to --method fill (it needs no domain)")
    if not args.aggregate:                       # streamed: memory independent of the rows
        mech = _mechanism(args)
        _warn_seeded(args, err)
        agg = file_sums(mech, args.file, args.column, rng=args.seed, reports=args.reports)
    candidates = read_values(args.candidates) if args.candidates else None
    print(mech.estimate(agg, candidates=candidates, method=args.method), file=out)
    if args.max_fake is not None:
        print(robust_interval(mech, agg, args.max_fake, candidates=candidates, method=args.method), file=out)


def _privatize(args, out, err):
    check_outputs(args.out, [args.file])
    mech = _mechanism(args)
    _warn_seeded(args, err)
    n = privatize_file(mech, args.file, args.out, args.column, rng=args.seed)
    print(f"wrote {n:,} reports ({mech!r}) to {args.out}", file=out)


def _aggregate(args, out, err):
    check_outputs(args.out, args.reports)
    screen = Screen(args.screen_alpha) if args.screen else None
    agg = aggregate_files(args.reports, progress=True, allow_seeded=args.allow_seeded, screen=screen)
    write_atomic(args.out, dump_column_sums(agg))
    if screen is not None:
        print(screen, file=out)
    print(f"wrote column sums of {agg.n:,} reports from {len(agg.batches)} batch(es) to {args.out}",
          file=out)


def main(argv=None, out=None, err=None):
    """Run the CLI; returns the exit status (0, or 2 on any error)."""
    out, err = out or sys.stdout, err or sys.stderr
    try:
        args = _parser().parse_args(argv)
        value_files.MAX_VALUE_BYTES = getattr(args, "max_value", value_files.DEFAULT_MAX_VALUE)
        if value_files.MAX_VALUE_BYTES < 1:
            raise CLIError(f"--max-value must be >= 1, got {value_files.MAX_VALUE_BYTES}")
        {"evaluate": _evaluate, "estimate": _estimate, "privatize": _privatize,
         "aggregate": _aggregate}[args.command](args, out, err)
    except FAILURES as exc:
        print("bfrrce: error: " + (" ".join(str(exc).split()) or type(exc).__name__), file=err)
        return 2
    return 0
