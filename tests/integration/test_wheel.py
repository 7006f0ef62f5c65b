"""The built wheel works on its own: installed into a fresh virtual environment, outside the
checkout, it runs ``python -m bfrrce evaluate`` and loads a named dataset (``bfrrce.datasets``).

No network: the wheel is built without build isolation (setuptools and wheel of the test's
environment), installed with ``--no-index --no-deps``, and the fresh environment finds the
dependencies (numpy, scipy, mmh3, bitarray) through a ``.pth`` line naming the test
environment's site-packages; its own site-packages comes first, so ``bfrrce`` is the wheel's.
"""

import os
import shutil
import subprocess
import sys
import sysconfig
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
SOURCES = ("bfrrce", "protocols", "datasets", "docs", "pyproject.toml", "README.md", "LICENSE")


# Every docs/NAME.md and datasets/data/FILE that the installed modules name (in messages and
# docstrings) resolves in the installed wheel: a page through bfrrce.manual (bfrrce docs NAME),
# a data file beside the installed bfrrce.datasets.
RESOLVE = """
import re, pathlib, bfrrce, protocols, bfrrce.datasets
from bfrrce import manual
missing = set()
for package in (bfrrce, protocols):
    for path in pathlib.Path(package.__file__).parent.rglob("*.py"):
        text = path.read_text(encoding="utf-8")
        for name in re.findall(r"docs/([A-Za-z0-9_-]+)[.]md", text):
            try:
                manual.read(name)
            except Exception:
                missing.add("docs/" + name + ".md")
        for name in re.findall(r"datasets/data/([A-Za-z0-9_.-]+[A-Za-z0-9])", text):
            if not (pathlib.Path(bfrrce.datasets.__file__).parent / "data" / name).is_file():
                missing.add("datasets/data/" + name)
print(" ".join(sorted(missing)))
"""


def _run(args, cwd, env=None):
    done = subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout


def test_wheel_installs_and_runs(tmp_path):
    pytest.importorskip("wheel")
    source = tmp_path / "src"                      # a copy: the build writes build/ and egg-info
    source.mkdir()
    ignore = shutil.ignore_patterns("__pycache__", "*.egg-info")
    for name in SOURCES:
        path = ROOT / name
        if path.is_dir():
            shutil.copytree(path, source / name, ignore=ignore)
        else:
            shutil.copy(path, source / name)
    wheels = tmp_path / "wheels"
    _run([sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation",
          "--no-index", "-w", str(wheels), str(source)], cwd=tmp_path)
    (wheel,) = wheels.glob("bfrrce-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {f"bfrrce/datasets/data/{p.name}" for p in (ROOT / "datasets" / "data").glob("*") if p.is_file()}
    assert shipped <= names                        # the shipped samples are package data
    assert {"bfrrce/py.typed", "protocols/py.typed"} <= names
    meta = zipfile.ZipFile(wheel)
    info = next(n for n in names if n.endswith(".dist-info/METADATA"))
    metadata = meta.read(info).decode()
    assert "License-Expression: MIT" in metadata and "Provides-Extra: tabular" not in metadata
    assert any(n.endswith(".dist-info/licenses/LICENSE") for n in names)
    entry_points = meta.read(info.replace("METADATA", "entry_points.txt")).decode()
    assert "bfrrce = bfrrce.cli:main" in entry_points

    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    python = env_dir / ("Scripts/python.exe" if os.name == "nt" else "bin/python")
    site = Path(_run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                     cwd=tmp_path).strip())
    _run([sys.executable, "-m", "pip", "install", "-q", "--no-deps", "--no-index",
          "--target", str(site), str(wheel)], cwd=tmp_path)
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    work = tmp_path / "elsewhere"
    work.mkdir()
    where = _run([str(python), "-c", "import bfrrce; print(bfrrce.__file__)"], cwd=work, env=env)
    assert Path(where.strip()).is_relative_to(site)
    out = _run([str(python), "-m", "bfrrce", "evaluate", "--trials", "2"],
               cwd=work, env=env)
    assert "synthetic-1" in out and "fill" in out
    assert _run([str(python), "-m", "bfrrce", "--version"], cwd=work, env=env).strip() == "bfrrce 0.1.0"
    assert _run([str(python), "-m", "bfrrce", "docs", "formats"], cwd=work, env=env).startswith("# File formats")
    unresolved = _run([str(python), "-c", RESOLVE], cwd=work, env=env).strip()
    assert unresolved == "", f"references a wheel user cannot follow: {unresolved}"
    out = _run([str(python), "-c", "from bfrrce.datasets import load; print(load('synthetic-2').n)"],
               cwd=work, env=env)
    assert out.strip() == "10000"
