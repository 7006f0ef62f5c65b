"""The module map of docs/architecture.md holds: every import points to the same or a lower layer.

Layers: 0 ``protocols.errors``; 1 the rest of ``protocols``; 2 the core of ``bfrrce`` (accounting,
bloom, sums, estimation, mechanism, advice, robust); 3 ``bfrrce.io``; 4 ``bfrrce.datasets``,
``bfrrce.evaluation``, ``bfrrce.cli``. Imports are read from the source (module level and inside
functions alike), so an import hidden in a function to dodge a circle is caught too.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TOP = ("bfrrce.datasets", "bfrrce.evaluation", "bfrrce.cli", "bfrrce.__main__")


def layer(module):
    if module == "protocols.errors":
        return 0
    if module.startswith("protocols"):
        return 1
    if module.startswith(TOP):
        return 4
    if module.startswith("bfrrce.io"):
        return 3
    if module in ("bfrrce", "bfrrce.__init__"):
        return 4                       # the package's public face re-exports the core
    return 2


def modules():
    for folder, package in (("protocols", "protocols"), ("bfrrce", "bfrrce"), ("datasets", "bfrrce.datasets")):
        for path in sorted((ROOT / folder).rglob("*.py")):
            parts = list(path.relative_to(ROOT / folder).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            yield ".".join([package, *parts]), path


def imports(module, path):
    is_package = path.name == "__init__.py"
    base = module.split(".") if is_package else module.split(".")[:-1]
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Import):
            yield from (a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                prefix = base[:len(base) - node.level + 1]
                target = ".".join(prefix + ([node.module] if node.module else []))
            else:
                target = node.module
            yield target
            yield from (f"{target}.{a.name}" for a in node.names)


def project(name):
    return name.split(".")[0] in ("bfrrce", "protocols")


@pytest.mark.parametrize("module, path", list(modules()), ids=lambda x: str(x).rsplit("/", 1)[-1])
def test_imports_point_down(module, path):
    if module in ("bfrrce", "protocols"):
        return                         # package faces re-export
    known = {m for m, _ in modules()}
    for target in imports(module, path):
        if not project(target) or target not in known:
            continue                   # third party, or a name inside a module
        assert layer(target) <= layer(module), f"{module} imports {target}: an arrow up"
        if module == "protocols.errors":
            raise AssertionError(f"protocols.errors must be a leaf, imports {target}")
