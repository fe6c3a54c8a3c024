"""Smoke runs of the benchmark scripts in bench/, so that an API change that breaks one fails CI."""
