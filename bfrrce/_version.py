"""The package version, read by pyproject.toml (``[tool.setuptools.dynamic]``) and ``bfrrce --version``."""

__version__ = "0.1.0"
