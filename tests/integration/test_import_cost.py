"""``import bfrrce`` and the CLI's ``--help`` load no heavy optional module: scipy.stats and
scipy.optimize (most of a second) come in when a bound, a p-value or a search runs
(:mod:`protocols.core.lazy`), pyarrow when a file is read, matplotlib and tqdm when a figure or a
progress bar is drawn. Guarded by the modules imported (in a fresh interpreter), not by a timer."""

import subprocess
import sys

import pytest

HEAVY = ("scipy.stats", "scipy.optimize", "scipy.special", "scipy.linalg", "pyarrow", "matplotlib",
         "tqdm", "pandas", "polars")


def loaded(code):
    probe = code + "\nimport sys\nprint(' '.join(m for m in sys.modules))"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    return set(done.stdout.split())


@pytest.mark.parametrize("code", [
    "import bfrrce",
    "import protocols",
    "import sys; sys.argv = ['bfrrce', '--help']\nimport bfrrce.cli\ntry:\n    bfrrce.cli.main(['--help'])\n"
    "except SystemExit:\n    pass",
])
def test_no_heavy_module_at_import(code):
    modules = loaded(code)
    assert not {m for m in HEAVY if m in modules}


def test_scipy_comes_in_when_used():
    modules = loaded("import numpy as np\nfrom bfrrce import BFRRCE\nm = BFRRCE(epsilon=2, L=64)\n"
                     "m.estimate(m.aggregate(m.privatize(['a', 'b'] * 50, rng=0)))")
    assert "scipy.stats" in modules
