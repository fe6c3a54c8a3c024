"""A model module whose own code fails as it is imported (`structbench run --model tests.support.broken_import:Model`)."""

raise RuntimeError("the module's configuration file is missing")
