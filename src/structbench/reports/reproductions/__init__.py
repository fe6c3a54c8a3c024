"""`docs/reproductions.md`: the reference runs beside the papers' numbers, generated from a store.

The page is made from the reference bundle's runs (`structbench.store.bundle.reference_store`, a
normal store), never typed by hand: per paper, one table of the measured cells (mean and 95%
interval over seeds, from the report's own cell function `structbench.reports.builders.boards.cell_table`)
beside the published numbers of `structbench/analysis/references.yaml`, one table of the runs
behind them (seeds, budget, how many seeds reached their recipe's convergence criterion, CPU time,
commit), the claims checked on those runs (`structbench.analysis.claims`), and the commands that
make each cell again. Every table names the grid, the commits and structbench versions, the torch
thread counts and SIMD levels its runs were made with.

`sections.SECTIONS` says which paper each (suite, model) cell belongs to; a cell no section names
lands in the last one, so that no reference run is left off the page. `page` gathers each section's
content from the store: the measured rows beside the published numbers (`published`) and what made
the runs and how to make them again (`runs`). `markdown` renders it with the template beside it
(`templates/reproductions.md.j2`), which holds the prose (why a number differs from the paper's),
keyed by section and by cell and shown only where that cell has runs: the template holds no measured
number. Rows, sources and claims are in a fixed order, so the same store gives the same bytes.

A product of its own: `structbench reference tables` writes it (`markdown.write_reproductions`); the
leaderboard site never imports it.
"""
