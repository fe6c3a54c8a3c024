"""Built-in suites. Each module holds one suite family; they register as entry points."""
