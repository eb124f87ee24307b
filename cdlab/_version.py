"""The package version (one home: ``cdlab.__version__`` and the run records read it)."""
__version__ = "0.1.0"
