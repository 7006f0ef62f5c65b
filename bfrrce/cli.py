"""Command line (``bfrrce`` or ``python -m bfrrce``; docs/cli.md).

``bfrrce estimate FILE --epsilon E``: privatize every row, aggregate, estimate, with L, l and the
perturbation chosen by the advisor for the rows' count and ε (``--L`` and friends fix them).
The same job split as a deployment runs it: ``privatize`` (clients: a report file),
``aggregate`` (server: report files → one column-sums file, streamed), and ``estimate SUMS``.
``bfrrce evaluate``: AARE, bounds and coverage of the estimators across ε on a dataset.
``bfrrce docs NAME``: a page of the documentation shipped with the package.
``estimate --shuffled --delta D`` also prints the central (ε, δ) of the n reports had they
passed a trusted shuffler.
Sets: ``privatize-set FILE --epsilon E --out R`` (one party: every row of FILE is one of its
items; one report), then ``aggregate`` and ``estimate SUMS`` as for values (docs/sets.md).

Results go to stdout; notes (the chosen parameters), warnings and progress bars to stderr.
Errors are one line on stderr and exit status 2.
"""

from __future__ import annotations

import argparse
import csv
import datetime
import hashlib
import json
import math
import os
import sys
import time
import warnings
import zlib
from pathlib import Path

import numpy as np

from protocols.core.randomness import SEEDED_WARNING
from protocols.errors import LDPError

from . import manual
from ._version import __version__
from .advice import suggest_parameters
from .calibration import PERTURBATIONS
from .datasets import load as load_dataset
from .estimation.result import EXTRAPOLATION_HINT
from .evaluation import (LEGEND, METHODS, THRESHOLDS, check_evaluation_outputs, evaluate, figure_name,
                         format_table, write_outputs)
from .io.atomic import check_outputs, write_atomic
from .io.formats import COLUMN_SUMS, REPORTS, SUPPORT_COUNTS, dump_column_sums, dump_reports, read_column_sums_file
from .io.pipeline import file_sums, privatize_file
from .io.stream import Screen, aggregate_files, progress_bar
from .io.survey import Survey, bfrrce_kind, check_path, columns, survey
from .io import values as value_files
from .io.values import read_values
from .manipulation import robust_interval
from .mechanism import BFRRCE
from .sets import SetSketch

MIN_L = 16                      # the advisor's smallest filter (bfrrce.advice)
JSON_SCHEMA = "bfrrce-estimate/1"
FAILURES = (LDPError, ValueError, OSError, EOFError, csv.Error, zlib.error,  # ValueError: numpy, argparse
            MemoryError)


class CLIError(LDPError):
    """A command line that cannot run (bad arguments, unknown method or dataset)."""


class _Parser(argparse.ArgumentParser):
    out = None                         # where --help and --version print (main's ``out``)

    def error(self, message):
        raise CLIError(message)

    def _print_message(self, message, file=None):
        if message:
            (_Parser.out or file or sys.stdout).write(message)


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


def _perturbation(text):
    if text == "auto":
        return None
    if text not in PERTURBATIONS:
        raise argparse.ArgumentTypeError(f"choose from auto, {', '.join(PERTURBATIONS)}, got {text!r}")
    return text


def _filter_options(parser, whose):
    """--L, --l, --perturbation: ``auto`` (the advisor's choice, the default) or a value."""
    parser.add_argument("--L", type=_auto_int(MIN_L, "--L"), metavar="L",
                        help=f"bits per filter{whose}, at least {MIN_L} (default auto: the advisor's choice)")
    parser.add_argument("--l", type=_auto_int(1, "--l"), metavar="l",
                        help=f"hashes per value{whose} (default auto: the advisor's choice, usually 1)")
    parser.add_argument("--perturbation", type=_perturbation, metavar="{auto,optimized,symmetric}",
                        help=f"perturbation{whose}: optimized (p = 1/2) or symmetric (the paper's) "
                             "(default auto: the advisor's choice)")


def _parser():
    ap = _Parser(prog="bfrrce", description="Distinct counting under local differential privacy.")
    ap.add_argument("--version", action="version", version=f"bfrrce {__version__}")
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
                    help="synthetic-1, synthetic-2, synthetic (see --synthetic), bitcoin or a file "
                         "(default synthetic-1)")
    ev.add_argument("--synthetic", type=_options, default={},
                    help="with --dataset synthetic: comma-separated key=value of n, cardinality, domain, "
                         "distribution (uniform, zipf), s, seed, e.g. "
                         "n=1000000,cardinality=1000,distribution=zipf,s=1.1")
    _filter_options(ev, " of corrected and fill")
    ev.add_argument("--column", help="with --dataset FILE: the column of a CSV/TSV/Parquet file")
    ev.add_argument("--paper", action="store_true", help="reproduce the paper's experiment (see below)")
    ev.add_argument("--epsilons", type=_floats,
                    help="user-level ε, comma-separated (default 0.5,1,2,4,8); with --paper the per-bit ε "
                         "(default 0.1,...,1.0)")
    ev.add_argument("--trials", type=int, default=50, help="simulated collections per row (default 50)")
    ev.add_argument("--methods", help=f"comma-separated of {', '.join(METHODS)} (default: all; --paper: "
                    "paper,corrected)")
    ev.add_argument("--threshold", default="z95",
                    help=f"membership rules of the paper method, comma-separated of {', '.join(THRESHOLDS)} "
                         "(default z95)")
    ev.add_argument("--paper-L", type=_auto_int(MIN_L, "--paper-L"), default=1024,
                    help="bits of the paper method's filter (default 1024)")
    ev.add_argument("--paper-l", type=_auto_int(1, "--paper-l"), default=1, help="hashes of the paper method (default 1)")
    ev.add_argument("--seed", type=int, default=0, help="seed of the simulated noise (default 0)")
    ev.add_argument("--out", help="folder for results.csv, results.json and the figure (default: print only)")
    ev.add_argument("--html", action="store_true", help="with --out: also report.html, one self-contained page")
    ev.add_argument("--simulate", choices=("exact", "binomial"), default="binomial",
                    help="binomial: column sums drawn exactly in distribution (default); exact: every report")
    ev.add_argument("--bitcoin-path", help="with --dataset bitcoin: block folder or export (default: the "
                                           "sample shipped with the package)")
    ev.add_argument("--quiet", action="store_true", help="no progress bar")
    es = sub.add_parser(
        "estimate", formatter_class=argparse.RawDescriptionHelpFormatter,
        usage="bfrrce estimate FILE --epsilon E [--column C] [options]\n       bfrrce estimate SUMS.bfr [options]",
        help="privatize every row of a file as its user would, then estimate (or estimate from column sums)",
        description="Bounds on the number of distinct values of FILE's column, and a point estimate. "
                    "FILE is either values (CSV, TSV, Parquet or text with one value a line, optionally "
                    ".gz): every row is privatized as its user would, with L, l and the perturbation "
                    "chosen by the advisor for the rows' count and ε unless given; or a column-sums "
                    "file written by 'bfrrce aggregate', which fixes every parameter.",
        epilog="output: the bounds first, in words, then the point estimate and what it assumes, the "
               "detection limit and the parameters;\n--json prints the whole result as JSON instead, "
               "--out FILE writes that JSON to FILE (schema: bfrrce docs cli).\n"
               "Notes (the parameters chosen) and warnings go to stderr.")
    es.add_argument("file", metavar="FILE", help="values, or a column-sums file (detected from its first bytes)")
    es.add_argument("--aggregate", action="store_true",
                    help="insist that FILE is a column-sums file (detected anyway; kept for old scripts)")
    es.add_argument("--candidates", metavar="FILE",
                    help="candidate values, one per line: lets method 'corrected' count them (default: none)")
    es.add_argument("--method", default="auto", choices=("auto", "paper", "corrected", "fill"),
                    help="the point estimator: fill (needs no candidates), corrected (with --candidates), "
                         "paper (the paper's threshold baseline), auto: corrected with candidates, "
                         "else fill (default auto)")
    es.add_argument("--shuffled", action="store_true",
                    help="also print the central (ε, δ) these n reports would have if a trusted "
                         "shuffler had stripped their order (needs --delta; docs/privacy.md)")
    es.add_argument("--delta", type=float, help="δ of the central guarantee of --shuffled (default: none)")
    es.add_argument("--max-fake", type=float, metavar="BETA",
                    help="also print the interval that holds whatever up to this fraction of fake reports "
                         "sent (docs/manipulation.md; default: none)")
    es.add_argument("--max-weight", type=int, metavar="W",
                    help="with --max-fake: the most ones a fake report can have, the upper weight bound "
                         "that aggregate --screen prints (default: L, no screen: the upper bound is then n)")
    es.add_argument("--reports", action="store_true",
                    help="privatize every row (secure randomness unless --seed) and count the "
                         "reports; default: draw the column sums from their exact law given the rows' "
                         "filters (the same law; O(L) draws from an OS-seeded numpy Generator)")
    es.add_argument("--extrapolate", action="store_true",
                    help="also print a model-based count: D if the frequencies follow a power law, fitted "
                         "to the values above the detection limit and the users below it, or why the model "
                         "is refused (not covered by the bounds; it reads l = 1, which it fixes where the "
                         "advisor would choose; docs/estimation.md)")
    es.add_argument("--json", action="store_true", help="print the whole result as JSON (schema: bfrrce docs cli)")
    es.add_argument("--out", metavar="FILE", help="also write the JSON result to FILE, atomically")
    pv = sub.add_parser("privatize", help="write one report per row of a file (what each client sends)",
                        description="One report per row of FILE's column, as each row's user would send "
                                    "it, into a report file for 'bfrrce aggregate'. L, l and the "
                                    "perturbation are chosen by the advisor for the rows' count and ε "
                                    "unless given.")
    pv.add_argument("file", metavar="FILE", help="values: CSV, TSV, Parquet or text (one value a line), optionally .gz")
    pv.add_argument("--out", required=True, metavar="FILE", help="report file to write (required)")
    for parser in (es, pv):
        parser.add_argument("--column", metavar="C",
                            help="the column of a CSV/TSV/Parquet file (default: the only column; a "
                                 "text file has none)")
        parser.add_argument("--epsilon", type=_positive, required=parser is pv, metavar="E",
                            help="user-level privacy budget ε of each row's user (required for values)")
        _filter_options(parser, "")
        parser.add_argument("--seed", type=int, help="seed of the noise, for a reproducible simulation "
                                                     "(default: a ChaCha20 stream keyed from os.urandom); "
                                                     "seeded noise is replayable: privatize marks its file seeded")
        parser.add_argument("--max-value", type=int, default=value_files.DEFAULT_MAX_VALUE, metavar="BYTES",
                            help="longest value, line, cell or header read, in bytes "
                                 f"(default {value_files.DEFAULT_MAX_VALUE:,})")
        parser.add_argument("--hash-seed", type=int, default=0,
                            help="first seed of the Bloom filter's hashes, shared by every client and the "
                                 "server (default 0)")
        parser.add_argument("--quiet", action="store_true", help="no progress bar and no note of the chosen parameters")
    ps = sub.add_parser("privatize-set", help="one party: every row of a file is one of its items; "
                                              "write its one set-sketch report (ε per item)",
                        description="One party's set-sketch report (docs/sets.md): every row of FILE is one "
                                    "of its items; ε is per item, a party holding k items gets k·ε.")
    ps.add_argument("file", metavar="FILE", help="the party's items: CSV/TSV/Parquet column or text lines")
    ps.add_argument("--out", required=True, metavar="FILE", help="report file to write (required)")
    ps.add_argument("--column", metavar="C", help="the column of a CSV/TSV/Parquet file (default: the only column)")
    ps.add_argument("--epsilon", type=_positive, required=True, metavar="E",
                    help="budget per item (required; a party of k items gets k·ε)")
    ps.add_argument("--buckets", type=int, default=4096, help="buckets of the sketch (default 4096)")
    ps.add_argument("--levels", type=int, default=24, help="geometric levels of the sketch (default 24)")
    ps.add_argument("--hash-seed", type=int, default=0, help="seed of the item hash, shared by every party (default 0)")
    ps.add_argument("--seed", type=int, help="seed of the noise, for a reproducible simulation "
                                             "(default: a ChaCha20 stream keyed from os.urandom)")
    ag = sub.add_parser("aggregate", help="sum report files (streamed) into one column-sums file",
                        description="Column sums of report files written by 'bfrrce privatize' (a batch "
                                    "counted twice is refused), for 'bfrrce estimate SUMS'.")
    ag.add_argument("reports", nargs="+", metavar="REPORTS", help="report files")
    ag.add_argument("--out", required=True, metavar="FILE", help="column-sums file to write (required)")
    ag.add_argument("--quiet", action="store_true", help="no progress bar")
    ag.add_argument("--screen", action="store_true",
                    help="drop reports of implausible weight while streaming and say how many (bfrrce.poisoning)")
    ag.add_argument("--screen-alpha", type=float, default=1e-3,
                    help="largest probability that the screen drops an honest report (default 0.001)")
    for parser in (es, ag):
        parser.add_argument("--allow-seeded", action="store_true",
                            help="accept files of seeded (replayable) noise, for demonstrations and tests")
    dc = sub.add_parser("docs", help="print a page of the documentation shipped with the package",
                        description="Print one page of the documentation (Markdown). Pages: "
                                    + ", ".join(manual.names()) + ".")
    dc.add_argument("name", nargs="?", default="index", metavar="NAME",
                    help="page name, e.g. formats or docs/formats.md (default: the list of pages)")
    return ap


def _evaluate(args, out, note, argv):
    if args.html and not args.out:
        raise CLIError("--html writes report.html into the --out folder: give --out FOLDER")
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
                         candidates=data.candidates, name=data.name, parameters=fixed, progress=not args.quiet)
    elapsed = time.perf_counter() - start
    if args.paper:
        title = (f"The paper's experiment: AARE against the per-bit ε; paper method: L={args.paper_L}, "
                 f"l={args.paper_l}, symmetric, rule {', '.join(rules)}")
    else:
        title = f"{names[0]}: the estimators across ε"
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
        written = write_outputs(rows, args.out, title, notes, args.html, figure,
                                provenance={"bfrrce_version": __version__, "command": ["bfrrce", *argv]},
                                inputs=inputs)
        for path in written:
            print(f"wrote {path}", file=out)
        if not any(str(path).endswith(".png") for path in written):
            print("no figure: matplotlib is not installed (pip install 'bfrrce[plot]')", file=out)


def _auto_int(minimum, name):
    """argparse type: ``auto`` (None) or an integer >= ``minimum``."""
    def parse(text):
        if text.strip().lower() == "auto":
            return None
        try:
            value = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{name} must be 'auto' or an integer, got {text!r}") from None
        if value < minimum:
            raise argparse.ArgumentTypeError(f"{name} must be >= {minimum}, got {value}")
        return value
    return parse


def _positive(text):
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not (math.isfinite(value) and value > 0):
        raise argparse.ArgumentTypeError(f"must be finite and > 0, got {text!r}")
    return value


def _value_source(path, column):
    """The column to read from a values file: ``column``, the only column of a one-column
    table, or an error listing the columns (before any row is read)."""
    names = columns(path)
    if names is None:                  # text: one value per line
        if column is not None:
            raise CLIError(f"--column does not apply to {Path(path).name}, a text file of one value per "
                           "line (.csv, .tsv and .parquet files have columns)")
        return None
    if column is None:
        if len(names) == 1:
            return names[0]
        raise CLIError(f"{Path(path).name} has {len(names)} columns ({', '.join(names)}): choose one "
                       "with --column")
    if column not in names:
        raise CLIError(f"column {column!r} not in {Path(path).name} (columns: {', '.join(names)})")
    return column


def _wrong_kind(path, kind, command):
    """One line for a BFRRCE file that ``command`` does not read: what it is, what to run instead."""
    name = Path(path).name
    what = {REPORTS: "a report file (what 'bfrrce privatize' writes)",
            COLUMN_SUMS: "a column-sums file (what 'bfrrce aggregate' writes)",
            SUPPORT_COUNTS: "the aggregate of a protocols frequency oracle"}.get(kind, f"a BFRRCE file of kind {kind}")
    if command == "privatize":
        return f"{name} is {what}, not values: privatize reads a CSV, TSV, Parquet or text file"
    if kind == REPORTS:
        return f"{name} is {what}: run 'bfrrce aggregate {name} --out sums.bfr', then 'bfrrce estimate sums.bfr'"
    if kind == COLUMN_SUMS:
        return f"{name} is {what}, already aggregated: run 'bfrrce estimate {name}'"
    return f"{name} is {what}, not BFRRCE column sums: read it with bfrrce.io.formats.load_aggregate"


def _parameters(args, n, note):
    """The mechanism for ``n`` rows: L, l and the perturbation from the options, the rest from
    the advisor (the analytic AARE model, D anywhere in 1..n); one line on ``note`` says which."""
    fixed = {key: value for key, value in (("L", args.L), ("l", args.l), ("perturbation", args.perturbation))
             if value is not None}
    if args.l is not None and args.L is not None and args.l > args.L:
        raise CLIError(f"--l {args.l} is more than --L {args.L} bits")
    if len(fixed) < 3:
        advice = suggest_parameters(n, args.epsilon, (1, n), Ls=None if args.L is None else (args.L,),
                                    ls=(1, 2, 3) if args.l is None else (args.l,),
                                    perturbations=PERTURBATIONS if args.perturbation is None else (args.perturbation,))
        chosen = dict(advice.parameters, **fixed)
        advised = [key for key in ("L", "l", "perturbation") if key not in fixed]
        note(f"L={chosen['L']:,}, l={chosen['l']}, {chosen['perturbation']} perturbation: "
             f"{', '.join(advised)} chosen by the advisor for {n:,} rows at ε={args.epsilon:g} (the lowest "
             "predicted error for any number of distinct values up to the rows'; --L, --l and "
             "--perturbation fix them)")
        how = {"chosen_by": "advisor", "advised": advised, "rows_surveyed": n, "advice": advice.explanation}
    else:
        chosen, how = fixed, {"chosen_by": "options"}
    mech = BFRRCE(epsilon=args.epsilon, hash_seed=args.hash_seed, **chosen)
    return mech, how


class _Progress:
    """A progress bar of a file job (rows, MB/s) on a terminal's stderr; nothing otherwise."""

    def __init__(self, quiet, rows, size, desc):
        self.bar = None if quiet else progress_bar(rows, " rows", unit_scale=True, desc=desc)
        self.bytes_per_row = size / rows if rows else 0.0
        self.start, self.rows = time.perf_counter(), 0

    def update(self, rows):
        if self.bar is None:
            return
        self.rows += rows
        self.bar.update(rows)
        elapsed = time.perf_counter() - self.start
        if elapsed > 0 and self.bytes_per_row:
            self.bar.set_postfix_str(f"{self.rows * self.bytes_per_row / elapsed / 1e6:.1f} MB/s", refresh=False)

    def close(self):
        if self.bar is not None:
            self.bar.close()


def _values_job(args, note, digest):
    """For ``estimate FILE`` and ``privatize FILE`` on values: the column, the mechanism, its
    record, the file's survey and a progress bar."""
    if args.epsilon is None:
        raise CLIError("--epsilon is required for a file of values (the privacy budget of each row's user)")
    column = _value_source(args.file, args.column)
    auto = args.L is None or args.l is None or args.perturbation is None
    bar = not args.quiet and hasattr(sys.stderr, "isatty") and sys.stderr.isatty()    # its total: the rows
    found = survey(args.file, rows=auto or bar, digest=digest) if auto or digest or bar else None
    if found is not None and found.rows == 0:      # (None when not counted)
        raise CLIError(f"{Path(args.file).name} holds no values")
    mech, how = _parameters(args, max(found.rows, 1) if found else 1,
                            (lambda message: None) if args.quiet else note) if auto else (
        BFRRCE(epsilon=args.epsilon, L=args.L, l=args.l, perturbation=args.perturbation,
               hash_seed=args.hash_seed), {"chosen_by": "options"})
    progress = _Progress(args.quiet, found.rows if found else None, found.size if found else 0, args.command)
    return column, mech, how, found, progress


def _record(args, argv, found, kind, column, how, estimate, mech):
    """The JSON document of an estimate (schema: docs/cli.md)."""
    path = Path(args.file)
    return {
        "schema": JSON_SCHEMA,
        "bfrrce_version": __version__,
        "command": ["bfrrce", *argv],
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "input": {"path": str(path), "kind": kind, "column": column, "bytes": found.size,
                  "sha256": found.sha256},
        "parameters": {**estimate.parameters, "hash_seed": mech.hash_seed, **how},
        "result": estimate.to_dict(),
    }


def _estimate(args, out, note, argv):
    path = check_path(args.file)
    kind = bfrrce_kind(path)
    if kind is not None and kind != COLUMN_SUMS:
        raise CLIError(_wrong_kind(path, kind, "estimate"))
    if args.aggregate and kind is None:
        raise CLIError(f"{path.name} is not a BFRRCE file (bad magic): a column-sums file comes from "
                       "'bfrrce aggregate'; without --aggregate FILE is read as values")
    if args.candidates and args.method == "fill":
        raise CLIError("--candidates does not apply to --method fill (it needs no domain)")
    if args.candidates:
        check_path(args.candidates)
    if args.shuffled != (args.delta is not None):
        raise CLIError("--shuffled and --delta go together (the δ of the central guarantee)")
    if args.extrapolate and args.l is None and kind != COLUMN_SUMS:
        args.l = 1                               # the model reads one value a column
    if args.max_weight is not None and args.max_fake is None:
        raise CLIError("--max-weight goes with --max-fake (the most ones a fake report can have)")
    record = args.json or args.out
    if args.out:
        check_outputs(args.out, [args.file] + ([args.candidates] if args.candidates else []))
    if kind == COLUMN_SUMS:
        agg = read_column_sums_file(path, allow_seeded=args.allow_seeded)
        data = path.read_bytes() if record else b""
        mech = agg.mechanism
        if isinstance(mech, SetSketch):
            _estimate_set(args, mech, agg, out)
            return
        _check_fixed(args, mech)
        found = Survey(path.stat().st_size, hashlib.sha256(data).hexdigest() if record else None, None)
        column, how, kind_name = None, {"chosen_by": "file"}, "column sums"
    else:
        _warn_seeded(args, note)
        column, mech, how, found, progress = _values_job(args, note, digest=bool(record))
        try:
            agg = file_sums(mech, path, column, rng=args.seed, reports=args.reports, progress=progress.update)
        finally:
            progress.close()
        kind_name = "values"
        if found is None:
            found = Survey(path.stat().st_size, None, None)
    candidates = read_values(args.candidates) if args.candidates else None
    estimate = mech.estimate(agg, candidates=candidates, method=args.method, shuffled_delta=args.delta)
    for warning in estimate.warnings:
        note(f"warning: {warning}")
    extra = mech.extrapolate(agg, estimate.interval) if args.extrapolate else None
    document = _record(args, argv, found, kind_name, column, how, estimate, mech) if record else None
    if document is not None and extra is not None:
        document["extrapolation"] = extra.to_dict()
    if args.out:
        write_atomic(args.out, (json.dumps(document, indent=2) + "\n").encode())
    if args.json:
        print(json.dumps(document, indent=2), file=out)
    else:
        lines = [line for line in str(estimate).splitlines() if not line.startswith("warning: ")]
        if extra is not None:       # the count asked for, where the printout would only point to it
            hint = lines.index(EXTRAPOLATION_HINT) if EXTRAPOLATION_HINT in lines else len(lines)
            lines[hint:hint + 1] = [str(extra)]
        print("\n".join(lines), file=out)
        if args.max_fake is not None:
            print(robust_interval(mech, agg, args.max_fake, max_weight=args.max_weight), file=out)
        if args.out:
            print(f"wrote {args.out}", file=out)


def _check_fixed(args, mech):
    """Refuse options that a column-sums file fixes (unless they agree) or that cannot apply."""
    for option, given, fixed in (("--epsilon", args.epsilon, mech.epsilon), ("--L", args.L, mech.L),
                                 ("--l", args.l, mech.l), ("--hash-seed", args.hash_seed or None, mech.hash_seed)):
        if given is not None and not math.isclose(given, fixed, rel_tol=1e-9):
            raise CLIError(f"{option} {given} contradicts the column-sums file ({option} {fixed}); "
                           "its header fixes the parameters")
    if args.perturbation is not None and args.perturbation != mech.perturbation:
        raise CLIError(f"--perturbation {args.perturbation} contradicts the column-sums file "
                       f"({mech.perturbation}); its header fixes the parameters")
    for option, given in (("--column", args.column), ("--seed", args.seed), ("--reports", args.reports or None)):
        if given is not None:
            raise CLIError(f"{option} does not apply to a column-sums file")


def _estimate_set(args, sketch, agg, out):
    """The union of the parties' sets from set-sketch column sums."""
    for option, given in (("--L", args.L), ("--l", args.l), ("--perturbation", args.perturbation),
                          ("--candidates", args.candidates), ("--column", args.column), ("--seed", args.seed),
                          ("--extrapolate", args.extrapolate or None)):
        if given is not None:
            raise CLIError(f"{option} does not apply to set-sketch sums")
    if args.method != "auto":
        raise CLIError("--method does not apply to set-sketch sums")
    if args.epsilon is not None and not math.isclose(args.epsilon, sketch.epsilon, rel_tol=1e-9):
        raise CLIError(f"--epsilon {args.epsilon} contradicts the column-sums file (--epsilon {sketch.epsilon})")
    print(sketch.estimate(agg), file=out)


def _warn_seeded(args, note):
    if args.seed is not None:
        note(f"warning: --seed: {SEEDED_WARNING}")


def _privatize_set(args, out, note, argv):
    check_outputs(args.out, [args.file])
    _warn_seeded(args, note)
    sketch = SetSketch(epsilon=args.epsilon, buckets=args.buckets, levels=args.levels, hash_seed=args.hash_seed)
    items = read_values(args.file, args.column)
    write_atomic(args.out, dump_reports(sketch, sketch.privatize(items, rng=args.seed)[None]))
    print(f"wrote 1 report of {len(items):,} rows ({sketch!r}; {sketch.privacy}) to {args.out}", file=out)


def _privatize(args, out, note, argv):
    path = check_path(args.file)
    kind = bfrrce_kind(path)
    if kind is not None:
        raise CLIError(_wrong_kind(path, kind, "privatize"))
    check_outputs(args.out, [args.file])
    _warn_seeded(args, note)
    column, mech, _, _, progress = _values_job(args, note, digest=False)
    try:
        n = privatize_file(mech, path, args.out, column, rng=args.seed, progress=progress.update)
    finally:
        progress.close()
    print(f"wrote {n:,} reports ({mech!r}) to {args.out}", file=out)


def _aggregate(args, out, note, argv):
    for path in args.reports:
        kind = bfrrce_kind(path)
        if kind != REPORTS:
            raise CLIError(_wrong_kind(path, kind, "aggregate") if kind is not None else
                           f"{Path(path).name} is not a report file: run 'bfrrce privatize {Path(path).name} "
                           "--epsilon E --out reports.bfr' on a file of values first")
    check_outputs(args.out, args.reports)
    screen = Screen(args.screen_alpha) if args.screen else None
    agg = aggregate_files(args.reports, progress=not args.quiet, allow_seeded=args.allow_seeded, screen=screen)
    write_atomic(args.out, dump_column_sums(agg))
    if screen is not None:
        print(screen, file=out)
    print(f"wrote column sums of {agg.n:,} reports from {len(agg.batches)} batch(es) to {args.out}",
          file=out)


def _docs(args, out, note, argv):
    print(manual.read(args.name), file=out, end="")


def main(argv=None, out=None, err=None):
    """Run the CLI; returns the exit status (0, or 2 on any error; 141 when the reader of the
    output went away, as ``head`` does, quietly).

    Parameters
    ----------
    argv : list of str, optional
        The arguments (default ``sys.argv[1:]``).
    out, err : file-like, optional
        Where results and messages go (default stdout, stderr).

    Returns
    -------
    int
        The exit status.
    """
    out, err = out or sys.stdout, err or sys.stderr
    argv = list(sys.argv[1:] if argv is None else argv)
    _Parser.out = out

    def note(message):
        print(f"bfrrce: {message}", file=err)

    def show(message, category, filename, lineno, file=None, line=None):
        note(f"warning: {' '.join(str(message).split())}")

    try:
        try:
            args = _parser().parse_args(argv)
        except SystemExit as exc:          # --help, --version
            return int(exc.code or 0)
        value_files.MAX_VALUE_BYTES = getattr(args, "max_value", value_files.DEFAULT_MAX_VALUE)
        if value_files.MAX_VALUE_BYTES < 1:
            raise CLIError(f"--max-value must be >= 1, got {value_files.MAX_VALUE_BYTES}")
        with warnings.catch_warnings():
            warnings.showwarning = show
            {"evaluate": _evaluate, "estimate": _estimate, "privatize": _privatize,
             "privatize-set": _privatize_set, "aggregate": _aggregate, "docs": _docs}[args.command](args, out, note, argv)
            out.flush()
    except BrokenPipeError:
        if out is sys.stdout:              # no second error when Python flushes stdout at exit
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    except FAILURES as exc:
        print("bfrrce: error: " + (" ".join(str(exc).split()) or type(exc).__name__), file=err)
        return 2
    return 0
