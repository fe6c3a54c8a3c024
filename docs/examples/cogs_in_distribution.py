"""COGS without its generalisation set: train, dev and the in-distribution test, for a machine that cannot
download `gen.tsv` (which `cogs@1.0.0` needs before it builds).

`cogs@1.0.0` is skipped where its gen file cannot be had, so its in-distribution test cannot be measured
there either. This suite is that test alone: the same three published files (pinned by SHA-256), the
same tokens and the same exact match as `cogs`, under its own id, so that its runs are never mistaken for
runs of `cogs` (whose data, and so whose data hash, includes gen). Its suite score is the test split's
exact match: an in-distribution number, not COGS's headline.

Run it by module path from this folder:

    cd docs/examples
    structbench run --suite cogs_in_distribution:CogsInDistribution --model seq2seq-gru-attn --seeds 0-2

The neural baselines train with their COGS recipe (the spec's `recipe`, `semantic-parsing`), as on `cogs`.
"""

from __future__ import annotations

from structbench.specs import Example
from structbench.suite import SourceFiles
from structbench.suites.cogs import SOURCES, Cogs, examples_of

IN_DISTRIBUTION = ("train", "dev", "test")


class CogsInDistribution(Cogs):
    """COGS's train, dev and in-distribution test; no generalisation split."""

    spec = Cogs.spec.variant(
        id="cogs-in-distribution",
        description="COGS's in-distribution test alone (train, dev, test): for a machine without gen.tsv.",
        splits=[split for split in Cogs.spec.splits if split.name in IN_DISTRIBUTION],
        deviations="Deviations: COGS without its generalisation set (gen.tsv), so no generalisation "
        "case is measured; the three files it has are the published ones.",
    )
    sources = tuple(source for source in SOURCES if not source.path.endswith("/gen.tsv"))

    def generate(self, draw: int, files: SourceFiles) -> dict[str, list[Example]]:
        return {
            name: examples_of(name, files.read_text(f"cogs/{name}.tsv"), f"cogs/{name}.tsv") for name in IN_DISTRIBUTION
        }
