"""How long the tag-induction scorer takes on a corpus-sized tagging, beside scikit-learn's.

`structbench.scoring.induction_metrics` scores every POS-induction run (many-to-one, both
one-to-one matchings, V-measure and its parts, variation of information) from one contingency
table. This times it on N tokens of random tags and clusters (49 gold tags, as UD's XPOS; 49
clusters) beside scikit-learn computing the V-measure alone from the same labels
(`homogeneity_completeness_v_measure`), and checks that the two V-measures agree. It replaced a
unit test that asserted a wall time, which failed on a loaded machine.

    python bench/induction_metrics.py [--tokens 1000000] [--repeats 5] [--smoke]

`--smoke` scores 10,000 tokens once: the same code in well under a second.
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable

import numpy as np
from sklearn.metrics import homogeneity_completeness_v_measure

from structbench.scoring import induction_metrics

TAGS = CLUSTERS = 49


def best_seconds(call: Callable[[], object], repeats: int) -> float:
    """The fastest of `repeats` timed calls (after one untimed warm-up)."""
    call()
    times = []
    for _ in range(repeats):
        started = time.perf_counter()
        call()
        times.append(time.perf_counter() - started)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tokens", type=int, default=1_000_000)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--smoke", action="store_true", help="10,000 tokens, one repeat")
    arguments = parser.parse_args()
    tokens, repeats = (10_000, 1) if arguments.smoke else (arguments.tokens, arguments.repeats)
    rng = np.random.default_rng(0)
    gold, induced = rng.integers(TAGS, size=tokens).astype(str), rng.integers(CLUSTERS, size=tokens)
    ours = induction_metrics(gold, induced)["v_measure"]
    theirs = homogeneity_completeness_v_measure(gold, induced)[2]
    assert abs(ours - theirs) < 1e-9, f"V-measure {ours} differs from scikit-learn's {theirs}"
    structbench_s = best_seconds(lambda: induction_metrics(gold, induced), repeats)
    sklearn_s = best_seconds(lambda: homogeneity_completeness_v_measure(gold, induced), repeats)
    print(f"{'tokens':<10}{'structbench ms (all 7 metrics)':>34}{'scikit-learn ms (V-measure)':>32}{'ratio':>10}")
    print(f"{tokens:<10}{structbench_s * 1e3:>34.1f}{sklearn_s * 1e3:>32.1f}{structbench_s / sklearn_s:>10.2f}")
    print(f"V-measure  structbench {ours:.12f}  scikit-learn {theirs:.12f}")


if __name__ == "__main__":
    main()
