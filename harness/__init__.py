"""structbench: a benchmark harness for structural generalisation of sequence models."""

__version__ = "0.1.0"
