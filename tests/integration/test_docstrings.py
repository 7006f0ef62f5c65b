"""Every public class and function of ``protocols`` and ``bfrrce`` has a numpydoc docstring.

The public names are those of the packages' ``__all__`` (``protocols``, ``bfrrce``,
``bfrrce.estimation``) and the public methods and properties of the classes among them, and
every public function and class (name without a leading ``_``) defined in a module of
``protocols`` or ``bfrrce`` (found with ``pkgutil.walk_packages``; ``protocols.bits.numba_kernel``,
which needs numba, and the ``__main__`` modules are skipped).
A definition that takes arguments must document them in a ``Parameters`` section (a class: in
``Parameters`` or ``Attributes``); a function without arguments needs a ``Returns`` section;
a property or an exception class needs a docstring. Docstrings inherited from a base class count
(``inspect.getdoc``), so an override documented by its interface passes.
"""

from __future__ import annotations

import importlib
import inspect
import pkgutil
import re

import pytest

PACKAGES = ("protocols", "bfrrce", "bfrrce.estimation")
ROOTS = ("protocols", "bfrrce")
SKIPPED = ("protocols.bits.numba_kernel",)
SECTION = re.compile(r"^\s*(Parameters|Attributes|Returns)\s*\n\s*-{3,}", re.M)

def _public_members(cls):
    for name, member in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(member, (staticmethod, classmethod)):
            member = member.__func__
        if inspect.isfunction(member) or isinstance(member, property):
            yield name, member


def _definitions():
    seen: dict = {}
    for package in PACKAGES:
        module = importlib.import_module(package)
        for name in module.__all__:
            obj = getattr(module, name)
            if not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if not obj.__module__.startswith(("protocols", "bfrrce")):
                continue
            qualname = f"{package}.{name}"
            if id(obj) in seen:
                continue
            seen[id(obj)] = qualname
            yield qualname, obj, None
            if inspect.isclass(obj):
                for cls in obj.__mro__:
                    if not cls.__module__.startswith(("protocols", "bfrrce")):
                        continue
                    for member_name, member in _public_members(cls):
                        key = (id(obj), member_name)
                        if key not in seen:
                            seen[key] = True
                            yield f"{qualname}.{member_name}", member, obj
    yield from _module_definitions(seen)


def _modules():
    """The names of the modules of ``protocols`` and ``bfrrce`` the test imports."""
    names = []
    for root in ROOTS:
        package = importlib.import_module(root)
        names.append(root)
        for info in pkgutil.walk_packages(package.__path__, root + "."):
            if info.name in SKIPPED or info.name.rsplit(".", 1)[-1] == "__main__":
                continue
            names.append(info.name)
    return names


MODULES = _modules()


def _module_definitions(seen):
    for module_name in MODULES:
        module = importlib.import_module(module_name)
        for name, obj in vars(module).items():
            if name.startswith("_") or not (inspect.isclass(obj) or inspect.isfunction(obj)):
                continue
            if obj.__module__ != module_name or id(obj) in seen:
                continue
            seen[id(obj)] = f"{module_name}.{name}"
            yield f"{module_name}.{name}", obj, None


def _arguments(func):
    try:
        params = list(inspect.signature(func).parameters.values())
    except (TypeError, ValueError):
        return []
    return [p for p in params if p.name not in ("self", "cls")]


def problem(obj, owner):
    """What is missing from the docstring of ``obj`` (None when nothing is)."""
    if isinstance(obj, property):
        return None if inspect.getdoc(obj) else "no docstring"
    doc = inspect.getdoc(getattr(owner, obj.__name__)) if owner is not None else inspect.getdoc(obj)
    if inspect.isclass(obj) and owner is None and obj.__doc__ is None:
        doc = None               # a class must document itself, not inherit its base's text
    if not doc:
        return "no docstring"
    if inspect.isclass(obj):
        if issubclass(obj, (BaseException, tuple)) and not hasattr(obj, "__dataclass_fields__"):
            return None          # exceptions and named tuples: a docstring suffices
        init = [p for p in _arguments(obj) if p.kind is not p.VAR_POSITIONAL]
        if init and not re.search(r"^\s*(Parameters|Attributes)\s*\n\s*-{3,}", doc, re.M):
            return "no Parameters/Attributes section"
        return None
    if not SECTION.search(doc):
        return "no Parameters or Returns section"
    if _arguments(obj) and not re.search(r"^\s*Parameters\s*\n\s*-{3,}", doc, re.M):
        return "arguments but no Parameters section"
    return None


DEFINITIONS = list(_definitions())


@pytest.mark.parametrize("qualname, obj, owner", DEFINITIONS, ids=[d[0] for d in DEFINITIONS])
def test_numpydoc(qualname, obj, owner):
    missing = problem(obj, owner)
    assert missing is None, f"{qualname}: {missing}"
