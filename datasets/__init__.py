"""Named datasets for evaluating distinct counting, installed as ``bfrrce.datasets``.

The folder ``datasets`` at the top of the repository is mapped to ``bfrrce.datasets`` by the
``package-dir`` setting of pyproject.toml; it uses :mod:`bfrrce.io.values` to read files and is
never imported by the rest of :mod:`bfrrce` except the CLI and evaluation layer.

    from bfrrce import datasets
    data = datasets.load("synthetic-2")       # values, n, cardinality, candidates, description
    data = datasets.load("bitcoin", path="~/.bitcoin/blocks")
    data = datasets.load("my.csv", column="address")

Names: ``synthetic-1`` (n = 2,000) and ``synthetic-2`` (n = 10,000), the paper's sets: 122
distinct integers of 1..1000, every one present, frequencies as equal as possible, fixed seeds;
``synthetic`` (options n, cardinality, domain, distribution, s, seed); ``bitcoin`` (real
mainnet output addresses: the shipped sample, or with ``path`` a folder of block files, a block
file, or a CSV/TSV/Parquet export with an ``address`` column; decoy candidates of ``seed``);
any file path.
"""

from __future__ import annotations

import inspect
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from bfrrce.io.values import read_values
from protocols.errors import LDPValueError

from . import bitcoin, synthetic

NAMES = ("synthetic-1", "synthetic-2", "synthetic", "bitcoin")


@dataclass(frozen=True)
class Dataset:
    """A named set of values to count.

    Attributes
    ----------
    name : str
        The dataset's name (or the file's name).
    values : numpy.ndarray
        One value per user.
    cardinality : int
        The true number of distinct values.
    candidates : numpy.ndarray or None
        A candidate domain for the estimators that need one (None: no natural domain).
    description : str
        What the values are and where they come from.
    """

    name: str
    values: np.ndarray
    cardinality: int
    candidates: np.ndarray | None
    description: str

    @property
    def n(self) -> int:
        """The number of users (values)."""
        return len(self.values)


def _synthetic(name, **options):
    params = dict(synthetic.PAPER_SETS.get(name, {}), **options)
    known = set(inspect.signature(synthetic.generate).parameters)
    if set(params) - known:
        raise LDPValueError(f"unknown synthetic option(s) {sorted(set(params) - known)}: use {sorted(known)}")
    if not {"n", "cardinality"} <= set(params):
        raise LDPValueError("the synthetic dataset needs n and cardinality (e.g. n=10000,cardinality=500)")
    values = synthetic.generate(**params)
    domain = params.get("domain", 1000)
    return Dataset(name, values, len(np.unique(values)), np.arange(1, domain + 1),
                   f"n={len(values):,} users, {len(np.unique(values))} distinct integers of 1..{domain}, "
                   f"{params.get('distribution', 'uniform')} frequencies (seed {params.get('seed', 0)})")


def _bitcoin(path=None, column="address", seed=0):
    data = bitcoin.load(path, column, seed)
    return Dataset("bitcoin", data["values"], data["cardinality"], data["candidates"],
                   f"{data['description']}; from {data['provenance']}")


def _file(path, column=None, name=None):
    values = np.array(read_values(path, column))
    return Dataset(name or Path(path).name, values, len(np.unique(values)), None,
                   (f"{len(values):,} values of column {column!r}" if column else f"{len(values):,} lines")
                   + f" of {path}")


def load(name: str, **options: Any) -> Dataset:
    """Load a dataset by name (see the module docstring) or from a file path.

    Parameters
    ----------
    name : str
        One of :data:`NAMES`, or the path of a CSV, TSV, Parquet or text file.
    **options
        ``synthetic``: n, cardinality, domain, distribution, s, seed (:func:`synthetic.generate`);
        ``bitcoin``: path, column, seed (:func:`bitcoin.load`); a file: column.

    Returns
    -------
    Dataset

    Raises
    ------
    LDPValueError
        An unknown name that is not an existing file.
    """
    if name in ("synthetic-1", "synthetic-2", "synthetic"):
        return _synthetic(name, **options)
    if name == "bitcoin":
        return _bitcoin(**options)
    if Path(name).exists():
        return _file(name, options.get("column"))
    raise LDPValueError(f"unknown dataset {name!r}: use one of {NAMES} or a file path")
