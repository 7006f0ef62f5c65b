"""Evaluation of the estimators across ε: AARE, bounds and coverage; text, CSV, JSON, figures, HTML.

AARE (average absolute relative error) = mean over trials of |D̂ − D|/D. Beside it each row gives
the median lower and upper confidence bounds of the trials and their coverage, the share of
trials with lower <= D <= upper. The methods that read the same reports (``corrected`` and
``fill``; the paper's rules) read the same collection in each trial, a paired comparison whose
bounds are computed once: trial t at the i-th ε draws it from the stream
``numpy.random.default_rng([seed, i, j, t])``, j the index of the group's first method, so a
table is reproducible from its seed. ``simulate="binomial"`` draws the column sums exactly in
distribution from the users per column t_j, computed once per (L, l, seed) from the distinct
values and their multiplicities; ``"exact"`` privatizes every report.

Methods
-------
``corrected`` (candidates) and ``fill`` (no domain)
    The package's estimators, with L, l and the perturbation from :func:`suggest_parameters`
    for the n of the data and each ε, given only that D lies in 1..n (never the truth), or
    those of them that ``parameters`` fixes.
``paper``
    The paper's baseline (Bloom filter, symmetric per-bit randomized response, threshold t̂_j
    into a filter B″, count the candidates whose l bits are set) with its own L and l and a
    membership rule of :data:`THRESHOLDS`.

With ``per_bit=True`` (the paper's experiment) the ε of the table are the paper's per-bit
budgets ε_b (RR_P = e^{ε_b}/(1 + e^{ε_b})); the paper's method runs at them, and the package's
methods at the user-level ε = 2l·ε_b that they amount to (l the paper's hashes), so that the
reproduction and the honest answer at the same privacy sit side by side.
"""

from __future__ import annotations

import base64
import csv
import html
import io
import json
import math
import re
import shlex
import warnings
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from protocols.core.lazy import stats
from protocols.errors import LDPValueError, PrivacyWarning
from protocols.core.perturbation import simulate_column_sums
from protocols.core.randomness import simulating

from ._version import __version__
from .advice import suggest_parameters
from .bloom import memoize
from .estimation import estimate_cardinalities
from .estimation.design import Observed
from .io.atomic import check_outputs, write_atomic
from .io.stream import progress_bar
from .mechanism import BFRRCE
from .sums import ColumnSums

METHODS = ("corrected", "fill", "paper")
CANDIDATE_METHODS = ("corrected", "paper")
FIXABLE = ("L", "l", "perturbation")       # parameters of corrected and fill that can be fixed
THRESHOLDS = {
    "z95": "a bit is set when t̂_j > z₀.₉₅·σ₀ (σ₀ the standard deviation of t̂_j on an empty "
           "column): 5% of empty columns pass at every ε",
    "half": "a bit is set when t̂_j > 0.5 user: about half of the empty columns pass at every ε",
    "zero": "a bit is set when t̂_j > 0: half of the empty columns pass at every ε",
}
COLUMNS = ("dataset", "epsilon", "per_bit_epsilon", "method", "threshold", "L", "l", "perturbation",
           "trials", "aare", "aare_se", "mean_estimate", "median_lower", "median_upper", "coverage",
           "truth", "n", "detection_limit")
LEGEND = ("AARE: mean |estimate − true D|/D over the trials (± its standard error); lower, upper: "
          "medians of the 95% bounds on D; covered: share of trials with lower <= D <= upper; "
          "seen at: users a value needs to be detected with probability 1/2.")


def aare(estimates, truth):
    """Mean |estimate − truth|/truth and its standard error over trials.

    Parameters
    ----------
    estimates : array_like
        The estimate of each trial.
    truth : float
        The true value (nonzero).

    Returns
    -------
    (float, float)
        The AARE and its standard error (NaN for a single trial).
    """
    rel = np.abs(np.asarray(estimates, dtype=float) - truth) / truth
    se = rel.std(ddof=1) / math.sqrt(rel.size) if rel.size > 1 else float("nan")
    return float(rel.mean()), float(se)


def threshold_users(rule, mech, n):
    """The paper's membership threshold on t̂_j, in users, for a rule of :data:`THRESHOLDS`.

    Parameters
    ----------
    rule : str
        A key of :data:`THRESHOLDS`: "z95", "half" or "zero".
    mech : BFRRCE
        The mechanism (its null variance sets "z95").
    n : int
        The number of reports.

    Returns
    -------
    float
        The threshold, in users.

    Raises
    ------
    LDPValueError
        An unknown rule.
    """
    if rule == "z95":
        return float(stats.norm.isf(0.05) * math.sqrt(mech.null_variance(n)))
    if rule == "half":
        return 0.5
    if rule == "zero":
        return 0.0
    raise LDPValueError(f"unknown threshold rule {rule!r}: choose from {', '.join(THRESHOLDS)}")


def paper_mechanism(epsilon, L, l, per_bit):
    """The paper's configuration: symmetric perturbation at user-level ε or per-bit ε_b.

    Parameters
    ----------
    epsilon : float
        The user-level ε, or the per-bit ε_b when ``per_bit`` (nats).
    L : int
        The number of filter bits.
    l : int
        The bits one value sets.
    per_bit : bool
        Whether ``epsilon`` is per bit (the paper's mode; its :class:`PrivacyWarning` silenced).

    Returns
    -------
    BFRRCE
        The mechanism.
    """
    if per_bit:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", PrivacyWarning)
            return BFRRCE(per_bit_epsilon=epsilon, L=L, l=l)
    return BFRRCE(epsilon=epsilon, L=L, l=l, perturbation="symmetric")


@dataclass
class _Data:
    """Distinct values with their user counts, and the hashing cached per (L, l, seed)."""

    distinct: np.ndarray
    counts: np.ndarray
    candidates: object

    def __post_init__(self):
        self.n = int(self.counts.sum())
        self._columns, self._candidates = {}, {}

    def users_per_column(self, mech):
        key = (mech.L, mech.l, mech.seed)
        if key not in self._columns:
            self._columns[key] = mech.bloom.column_counts(mech.bloom.positions(self.distinct), self.counts)
        return self._columns[key]

    def candidate_positions(self, mech):
        key = (mech.L, mech.l, mech.seed)
        if key not in self._candidates:
            self._candidates[key] = mech.hash_candidates(self.candidates)
        return self._candidates[key]


def _estimate(mech, agg, runs, data):
    """``mech.estimate(agg, data.candidates, method, threshold=...)`` for each (method, threshold)
    of ``runs`` on the same sums (their bounds computed once), with the candidates hashed once per
    (L, l, seed) instead of once per call."""
    candidates = data.candidate_positions(mech) if any(m in CANDIDATE_METHODS for m, _ in runs) else None
    return estimate_cardinalities(Observed(agg.counts, mech.design(agg.n)), runs, confidence=0.95,
                                  parameters=mech.parameters, candidates=candidates,
                                  degraded=mech.degraded_laws(agg.n))


def _runs(methods, thresholds):
    return [(m, rule) for m in methods for rule in (thresholds if m == "paper" else (None,))]


def _groups(runs, eps, user_eps, chosen, paper_L, paper_l, per_bit, n):
    """The runs by the mechanism whose reports they read: [(mechanism, [(run index, method, rule,
    threshold)])], the package's methods first (one configuration), then the paper's rules."""
    package = [(j, m, rule, 0.5) for j, (m, rule) in enumerate(runs) if m != "paper"]
    groups = [(BFRRCE(epsilon=user_eps, **chosen), package)] if package else []
    paper = [(j, rule) for j, (m, rule) in enumerate(runs) if m == "paper"]
    if paper:
        mech = paper_mechanism(eps, paper_L, paper_l, per_bit)
        groups.append((mech, [(j, "paper", rule, threshold_users(rule, mech, n)) for j, rule in paper]))
    return groups


def evaluate(values, epsilons, methods=METHODS, trials=50, *, per_bit=False, paper_L=1024, paper_l=1,
             thresholds=("z95",), seed=0, simulate="binomial", candidates=None, name="data",
             progress=True, parameters=None):
    """AARE, bounds and coverage of each method at each ε on ``values``.

    Parameters
    ----------
    values : array_like
        One value per user.
    epsilons : sequence of float
        User-level ε, or the paper's per-bit ε_b with ``per_bit=True``.
    methods : sequence of {"corrected", "fill", "paper"}
        Candidate methods ("corrected", "paper") are skipped without ``candidates``.
    trials : int
        Simulated collections per row.
    per_bit : bool
        The paper's experiment (module docstring).
    paper_L, paper_l : int
        The paper method's filter.
    thresholds : sequence of str
        Membership rules of the paper method (:data:`THRESHOLDS`), one row each.
    seed : int
    simulate : {"binomial", "exact"}
    candidates : sequence, optional
        The candidate domain.
    name : str
    progress : bool
        A progress bar on stderr (cleared when done).
    parameters : dict, optional
        Some of L, l and perturbation for ``corrected`` and ``fill``, fixed instead of the
        advisor's choice (the rest still from :func:`suggest_parameters`).

    Returns
    -------
    list of dict
        One row per ε and method (and rule), keys :data:`COLUMNS`.

    Raises
    ------
    LDPValueError
        Unknown simulation, method, rule or parameter; trials < 1; no method applies.
    """
    if simulate not in ("binomial", "exact"):
        raise LDPValueError(f"simulate must be 'binomial' or 'exact', got {simulate!r}")
    if trials < 1:
        raise LDPValueError(f"trials must be >= 1, got {trials}")
    parameters = dict(parameters or {})
    unknown = sorted(set(parameters) - set(FIXABLE))
    if unknown:
        raise LDPValueError(f"unknown parameter {unknown[0]!r}: choose from {', '.join(FIXABLE)}")
    unknown = [m for m in methods if m not in METHODS]
    if unknown:
        raise LDPValueError(f"unknown method {unknown[0]!r}: choose from {', '.join(METHODS)}")
    for rule in thresholds:
        if rule not in THRESHOLDS:
            raise LDPValueError(f"unknown threshold rule {rule!r}: choose from {', '.join(THRESHOLDS)}")
    methods = [m for m in methods if candidates is not None or m not in CANDIDATE_METHODS]
    if not methods:
        raise LDPValueError("no method applies: candidate methods need a candidate domain")
    values = np.asarray(values)
    distinct, counts = np.unique(values, return_counts=True)
    data = _Data(memoize(distinct), counts, None if candidates is None else memoize(candidates))
    truth, n = len(distinct), data.n
    runs = _runs(methods, thresholds)
    bar = progress_bar(len(epsilons) * len(runs) * trials, "trial") if progress else None
    rows = []
    try:
        for i, eps in enumerate(epsilons):
            user_eps = 2 * paper_l * eps if per_bit else eps
            chosen = dict(parameters) if len(parameters) == len(FIXABLE) else dict(
                suggest_parameters(n, user_eps, (1, n), candidates, objective="aare").parameters, **parameters)
            drawn = {}
            for mech, members in _groups(runs, eps, user_eps, chosen, paper_L, paper_l, per_bit, n):
                t_users = data.users_per_column(mech) if simulate == "binomial" else None
                est, lower, upper = (np.empty((len(members), trials)) for _ in range(3))
                for t in range(trials):
                    rng = np.random.default_rng([seed, i, members[0][0], t])
                    if t_users is not None:
                        agg = ColumnSums(mech, simulate_column_sums(t_users, n, mech.p, mech.q, rng), n)
                    else:
                        with simulating():
                            agg = mech.aggregate(mech.privatize(values, rng=rng), label=False)
                    for k, e in enumerate(_estimate(mech, agg, [(m, x) for _, m, _, x in members], data)):
                        est[k, t], (lower[k, t], upper[k, t]) = e.value, e.interval
                    if bar is not None:
                        bar.update(len(members))
                for k, (j, method, rule, _) in enumerate(members):
                    drawn[j] = (mech, method, rule, est[k], lower[k], upper[k])
            for j in range(len(runs)):
                mech, method, rule, est, lower, upper = drawn[j]
                err, se = aare(est, truth)
                rows.append({"dataset": name, "epsilon": round(float(mech.epsilon), 6),
                             "per_bit_epsilon": eps if per_bit and method == "paper" else None,
                             "method": method, "threshold": rule, "L": mech.L, "l": mech.l,
                             "perturbation": mech.perturbation, "trials": trials, "aare": err,
                             "aare_se": se, "mean_estimate": float(est.mean()),
                             "median_lower": float(np.median(lower)), "median_upper": float(np.median(upper)),
                             "coverage": float(np.mean((lower <= truth) & (truth <= upper))),
                             "truth": truth, "n": n, "detection_limit": mech.detection_limit(n)[0.5]})
    finally:
        if bar is not None:
            bar.close()
    return rows


def _num(x, digits=0):
    if x is None:
        return ""
    if isinstance(x, float) and math.isinf(x):
        return "∞"
    return f"{x:,.{digits}f}"


TABLE = (  # header, width, cell
    ("ε (user)", 8, lambda r: f"{r['epsilon']:g}"),
    ("ε per bit", 9, lambda r: "" if r["per_bit_epsilon"] is None else f"{r['per_bit_epsilon']:g}"),
    ("method", 14, lambda r: r["method"] + (f" ({r['threshold']})" if r["threshold"] else "")),
    ("L", 6, lambda r: str(r["L"])),
    ("l", 2, lambda r: str(r["l"])),
    ("perturbation", 12, lambda r: r["perturbation"]),
    ("AARE", 6, lambda r: f"{r['aare']:.3f}"),
    ("± se", 6, lambda r: f"{r['aare_se']:.3f}"),
    ("mean estimate", 13, lambda r: _num(r["mean_estimate"], 1)),
    ("lower", 7, lambda r: _num(r["median_lower"])),
    ("upper", 7, lambda r: _num(r["median_upper"])),
    ("covered", 7, lambda r: f"{r['coverage']:.2f}"),
    ("true D", 7, lambda r: _num(r["truth"])),
    ("seen at", 7, lambda r: _num(r["detection_limit"])),
)


def _table_columns(rows):
    per_bit = any(r["per_bit_epsilon"] is not None for r in rows)
    return [c for c in TABLE if per_bit or c[0] != "ε per bit"]


def format_table(rows):
    """The rows as an aligned text table (the per-bit ε column only in the paper's mode).

    Parameters
    ----------
    rows : list of dict
        The result rows (:data:`COLUMNS`).

    Returns
    -------
    str
        The table, one line per row after a header line.
    """
    cols = _table_columns(rows)
    lines = [" ".join(f"{h:>{w}}" if i else f"{h:<{w}}" for i, (h, w, _) in enumerate(cols))]
    for r in rows:
        lines.append(" ".join(f"{cell(r):>{w}}" if i else f"{cell(r):<{w}}"
                              for i, (_, w, cell) in enumerate(cols)))
    return "\n".join(lines)


def _pyplot():
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    return plt


def _label(r, datasets):
    what = r["method"] + (f", t̂ rule {r['threshold']}" if r["threshold"] else "")
    if r["method"] != "paper" and r["per_bit_epsilon"] is None and any(x["per_bit_epsilon"] for x in datasets):
        what += " at ε = 2l·ε_b"
    return f"{r['dataset']}: {what}"


METHOD_NOTES = {
    "corrected": "corrected: the package's estimator with the candidate domain",
    "fill": "fill: the package's estimator from the reports alone (no candidates)",
    "paper": "paper: the paper's threshold baseline (the candidates whose bits pass the rule); its AARE can be "
             "low by coincidence, when its false positives make up for the values it misses",
}
_STYLES = {"corrected": ("o", "-"), "fill": ("s", "-"), "paper": ("^", ":")}


def _filters(sub):
    """'L=…, l=…, perturbation' of a line's rows, listing L per ε when it varies."""
    Ls = [r["L"] for r in sub]
    head = f"L={Ls[0]:,}" if len(set(Ls)) == 1 else "L=" + "/".join(f"{L:,}" for L in Ls) + " by ε"
    return f"{head}, l={sub[0]['l']}, {sub[0]['perturbation']}"


def plot(rows, path, title):
    """AARE against ε, one line per dataset and method (and rule); False without matplotlib.

    The figure stands alone: the title says what is plotted (``title`` names the run), a
    subtitle gives n, D and the trials of each dataset, a caption under the axes the filter of
    each line, what each method is and what the error bars are; lines of different methods have
    their own marker and style and are nudged apart along ε so that none hides another. In the
    paper's mode the x axis is the per-bit ε_b (the paper's layout) and the package's methods are
    drawn dashed at the user-level ε = 2l·ε_b of each ε_b.

    Parameters
    ----------
    rows : list of dict
        The result rows (:data:`COLUMNS`).
    path : str or os.PathLike
        The PNG file to write (atomically).
    title : str
        The name of the run.

    Returns
    -------
    bool
        True when the figure was written, False without matplotlib.
    """
    plt = _pyplot()
    if plt is None:
        return False
    per_bit = any(r["per_bit_epsilon"] is not None for r in rows)
    xs = {}
    if per_bit:      # the package's rows sit at the user ε of a paper row: map back to its ε_b
        xs = {(r["dataset"], r["epsilon"]): r["per_bit_epsilon"] for r in rows if r["per_bit_epsilon"]}
    keys = list(dict.fromkeys((r["dataset"], r["method"], r["threshold"]) for r in rows))
    fig, ax = plt.subplots(figsize=(8, 6))
    caption = []
    for i, key in enumerate(keys):
        sub = [r for r in rows if (r["dataset"], r["method"], r["threshold"]) == key]
        x = np.array([xs.get((r["dataset"], r["epsilon"]), r["epsilon"]) for r in sub], dtype=float)
        nudge = (i - (len(keys) - 1) / 2) * 0.03             # a fraction of a step: lines side by side
        x = x + 0.1 * nudge if per_bit else x * 2 ** nudge      # steps: 0.1 per bit, a factor 2 otherwise
        marker, style = _STYLES.get(key[1], ("o", "-"))
        if per_bit and key[1] != "paper":
            style = "--"
        ax.errorbar(x, [r["aare"] for r in sub], yerr=[r["aare_se"] for r in sub], marker=marker, ms=5,
                    capsize=3, linestyle=style, linewidth=1.6, alpha=0.9, label=_label(sub[0], rows), zorder=3 + i)
        caption.append(f"{_label(sub[0], rows)}: {_filters(sub)}")
    if per_bit:
        ax.set_xlabel("ε per bit, the paper's ε_b (user-level ε = 2l·ε_b; ε is in nats)")
    else:
        ax.set_xscale("log", base=2)
        ax.set_xlabel("ε, the user-level privacy budget (nats, log scale)")
    ax.set_ylabel("AARE: mean |estimate − D| / D (0 = exact)")
    ax.set_ylim(bottom=0)
    sets = dict.fromkeys((r["dataset"], r["n"], r["truth"], r["trials"]) for r in rows)
    subtitle = "; ".join(f"{name}: n = {n:,} users, D = {D:,} distinct values, {trials} trials a point"
                         for name, n, D, trials in sets)
    fig.suptitle("Relative error (AARE) of the distinct count against ε", fontsize=11)
    ax.set_title(f"{title}\n{subtitle}", fontsize=7.5)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=7.5)
    methods = dict.fromkeys(k[1] for k in keys)
    caption += [METHOD_NOTES[m] for m in methods if m in METHOD_NOTES]
    for name, n, D, _ in sets:
        limit = min(r["detection_limit"] for r in rows if r["dataset"] == name)
        if n / D < limit:
            caption.append(f"{name}: {n / D:,.1f} users a value on average, fewer than the detection limit of "
                           f"every point ({limit:,.0f} users or more): the point estimates miss most values; "
                           "the bounds still hold (table)")
    caption.append("error bars: ± 1 standard error of the mean over the trials; points nudged along ε "
                   "so that no line hides another")
    fig.text(0.01, 0.01, "\n".join(caption), fontsize=6.5, va="bottom", ha="left", wrap=True)
    fig.tight_layout(rect=(0, 0.018 * len(caption) + 0.02, 1, 1))
    png = io.BytesIO()
    fig.savefig(png, format="png", dpi=110)
    plt.close(fig)
    write_atomic(path, png.getvalue())
    return True


def figure_name(dataset: str) -> str:
    """``aare-NAME.png`` for a dataset name or path: its file name with every character other
    than letters, digits, ``.``, ``_`` and ``-`` replaced by ``_``.

    Parameters
    ----------
    dataset : str or os.PathLike
        The dataset's name or path.

    Returns
    -------
    str
        The figure's file name.
    """
    name = re.sub(r"[^A-Za-z0-9._-]+", "_", Path(str(dataset)).name).strip("._") or "dataset"
    return f"aare-{name}.png"


def check_evaluation_outputs(out, figure, html_page=False, inputs=()):
    """Refuse, before anything runs or is written, outputs of :func:`write_outputs` that are
    inputs, links, special or read-only files, and a figure name that is not a file name.

    Parameters
    ----------
    out : str or os.PathLike
        The output folder (absent or a folder).
    figure : str
        The figure's file name.
    html_page : bool
        Whether report.html will be written too.
    inputs : iterable of path
        The input files, which no output may be.

    Raises
    ------
    LDPValueError
        A figure that is not a file name, ``out`` not a folder, or an output refused by
        :func:`bfrrce.io.atomic.check_outputs`.
    """
    if Path(figure).name != figure:
        raise LDPValueError(f"figure must be a file name, got {figure!r}")
    if Path(out).exists() and not Path(out).is_dir():
        raise LDPValueError(f"--out {str(out)!r} is not a folder")
    if Path(out).is_dir():
        for name in ("results.csv", "results.json", figure) + (("report.html",) if html_page else ()):
            check_outputs(Path(out) / name, inputs)


def write_outputs(rows, out, title, notes=(), html_page=False, figure="aare.png", provenance=None, inputs=()):
    """results.csv, results.json, the figure ``figure`` (with matplotlib) and, with
    ``html_page``, report.html (tables and figure embedded) in folder ``out``; returns the paths.
    ``provenance`` ({"bfrrce_version": ..., "command": [...]}; default: this version, no command)
    goes into results.json and the page. Every file is written atomically
    (:func:`bfrrce.io.atomic.write_atomic`), and every destination is checked first
    (:func:`bfrrce.io.atomic.check_outputs`: not one of ``inputs``, a writable regular file or
    absent), so a refusal writes nothing.

    Parameters
    ----------
    rows : list of dict
        The result rows (:data:`COLUMNS`).
    out : str or os.PathLike
        The output folder (created if absent).
    title : str
        The name of the run.
    notes : iterable of str
        Notes for results.json and the page.
    html_page : bool
        Whether to write report.html.
    figure : str
        The figure's file name.
    provenance : dict or None
        The version and command line.
    inputs : iterable of path
        The input files, which no output may be.

    Returns
    -------
    list of pathlib.Path
        The files written.
    """
    provenance = dict(provenance or {"bfrrce_version": __version__, "command": None})
    out = Path(out)
    check_evaluation_outputs(out, figure, html_page, inputs)
    out.mkdir(parents=True, exist_ok=True)
    table = io.StringIO(newline="")
    writer = csv.DictWriter(table, fieldnames=COLUMNS)
    writer.writeheader()
    writer.writerows(rows)
    write_atomic(out / "results.csv", table.getvalue().encode())
    write_atomic(out / "results.json", json.dumps({**provenance, "title": title, "notes": list(notes),
                                                   "legend": LEGEND, "rows": rows}, indent=2, default=float).encode())
    written = [out / "results.csv", out / "results.json"]
    if plot(rows, out / figure, title):
        written.append(out / figure)
    if html_page:
        write_atomic(out / "report.html",
                     render_html(rows, title, notes, [out / figure] if len(written) > 2 else [],
                                 provenance).encode())
        written.append(out / "report.html")
    return written


def render_html(rows, title, notes=(), figures=(), provenance=None):
    """One self-contained HTML page: title, notes, legend, one table per dataset, figures as
    base64 PNG, and a last line with the package version and the command line (``provenance``).

    Parameters
    ----------
    rows : list of dict
        The result rows (:data:`COLUMNS`).
    title : str
        The name of the run.
    notes : iterable of str
        Paragraphs under the title.
    figures : iterable of path
        PNG files to embed.
    provenance : dict or None
        ``{"bfrrce_version": ..., "command": [...] or None}``; None: no last line.

    Returns
    -------
    str
        The HTML page.
    """
    esc = html.escape
    parts = ["<!DOCTYPE html>", "<html><head><meta charset=\"utf-8\">", f"<title>{esc(title)}</title>",
             "<style>body{font-family:sans-serif;margin:2em}table{border-collapse:collapse}"
             "td,th{border:1px solid #bbb;padding:2px 6px;text-align:right}</style></head><body>",
             f"<h1>{esc(title)}</h1>"]
    parts += [f"<p>{esc(note)}</p>" for note in notes]
    parts.append(f"<p><em>{esc(LEGEND)}</em></p>")
    cols = _table_columns(rows)
    for name in dict.fromkeys(r["dataset"] for r in rows):
        parts.append(f"<h2>{esc(name)}</h2><table><tr>" + "".join(f"<th>{esc(h)}</th>" for h, _, _ in cols) + "</tr>")
        for r in rows:
            if r["dataset"] == name:
                parts.append("<tr>" + "".join(f"<td>{esc(cell(r))}</td>" for _, _, cell in cols) + "</tr>")
        parts.append("</table>")
    for path in figures:
        data = base64.b64encode(Path(path).read_bytes()).decode("ascii")
        parts.append(f"<p><img alt=\"{esc(Path(path).name)}\" src=\"data:image/png;base64,{data}\"></p>")
    if provenance:
        command = provenance.get("command")
        parts.append(f"<p><small>bfrrce {esc(str(provenance.get('bfrrce_version')))}"
                     + (f"; command: <code>{esc(shlex.join(command))}</code>" if command else "") + "</small></p>")
    parts.append("</body></html>")
    return "\n".join(parts)

