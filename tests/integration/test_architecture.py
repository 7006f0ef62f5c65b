"""The module map of docs/architecture.md holds: every import points to the same or a lower layer.

Layers: 0 ``protocols.errors``; 1 ``protocols.core.validation``; 2 ``protocols.bits``; 3 the rest of
``protocols.core``; 4 ``protocols.oracles`` and ``protocols.mean``; 5 ``protocols.accountant``,
``protocols.audit``, ``protocols.consistency``, ``protocols.shuffle``, ``protocols.multidimensional``; 6 the core of ``bfrrce`` (calibration, bloom, sums,
estimation, mechanism, advice, poisoning); 7 ``bfrrce.io``; 8 ``bfrrce.datasets``,
``bfrrce.evaluation``, ``bfrrce.cli``. Imports are read from the source (module level and inside
functions alike), so an import hidden in a function to dodge a circle is caught too, and no module
imports a package face (``protocols``, ``bfrrce``) inside a function.
"""

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
TOP = ("bfrrce.datasets", "bfrrce.evaluation", "bfrrce.cli", "bfrrce.__main__")


PROTOCOL_LAYERS = (("protocols.errors",), ("protocols.core.validation",), ("protocols.bits",),
                   ("protocols.core",), ("protocols.oracles", "protocols.mean"),
                   ("protocols.accountant", "protocols.audit", "protocols.consistency", "protocols.shuffle",
                    "protocols.multidimensional"))


def layer(module):
    if module == "protocols":
        return len(PROTOCOL_LAYERS)    # the package's public face re-exports everything
    for rank, prefixes in enumerate(PROTOCOL_LAYERS):
        if any(module == p or module.startswith(p + ".") for p in prefixes):
            return rank
    if module.startswith(TOP):
        return 8
    if module.startswith("bfrrce.io"):
        return 7
    if module in ("bfrrce", "bfrrce.__init__"):
        return 8                       # the package's public face re-exports the core
    return 6


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


@pytest.mark.parametrize("module, path", list(modules()), ids=lambda x: str(x).rsplit("/", 1)[-1])
def test_no_package_face_imported_in_functions(module, path):
    """``import protocols`` inside a function is the import that dodges a circle: use the registry."""
    for func in ast.walk(ast.parse(path.read_text())):
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for node in ast.walk(func):
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module]
            else:
                continue
            assert not {"protocols", "bfrrce"} & set(names), f"{module}.{func.name} imports {names}"


def test_every_module_has_a_layer():
    for module, _ in modules():
        if module.startswith("protocols") and module != "protocols":
            assert layer(module) < len(PROTOCOL_LAYERS), module
