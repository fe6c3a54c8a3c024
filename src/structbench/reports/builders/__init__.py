"""The site's build stage: the results store -> one frozen `Site` value (`site`), by `build_site`
(`from_store`).

Only four modules read the store: `from_store` (the stage's entry), `boards` (the boards' cells,
ranks and compute), `ties` (the ≈best marks, from stored predictions) and `reference_runs` (the
reference runs apart from the user's). Every other module computes from what they read and reads no
store: the values the views and writers import (`site`, `suite_board`, `overview`, `families`,
`series`, `conditions`, `cards`, `verdicts`, `provenance`, `predictions`, `plots`) and the overlap
audits a suite card shows (`overlap_audits`). This package imports none of its modules, so that a
view importing a value never loads the store.

Named `builders`, not `build`: a folder named `build` is skipped by git (`.gitignore`), ruff and
pytest alike.
"""
