"""Reference models. Each registers as an entry point of the `structbench.models` group."""
