"""Built-in suites, one module (or subpackage) per paper's experiments; they register as entry points."""
