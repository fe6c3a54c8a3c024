"""`structbench sweep`: a grid of runs on a process pool or Ray, written by one driver, resumable.

`driver` plans the grid against the store, hands its runs to an executor (`executors`: a local
process pool or Ray) and stores each result; `worker` fits and predicts one run away from the store,
in a worker process; `grid` reads the grid file, `plan` keys its runs, `supervised` runs `structbench
run`'s seeds in the same worker. This package imports none of them itself, so that a worker process
imports only what a run needs (not the driver's store and cells).
"""
