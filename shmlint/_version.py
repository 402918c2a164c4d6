"""The package version, in one place: pyproject.toml reads it from here (setuptools dynamic
version), so ``shmlint --version`` needs no importlib.metadata lookup at start-up."""

__version__ = "0.1.0"
