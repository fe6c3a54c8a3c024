"""`structbench sweep`: a grid of runs on a process pool or Ray, written by one driver, resumable.

`grid` reads the grid file, `plan` keys its runs against the store, and `driver` hands them to an
executor (`structbench.execution.executors`: a local process pool or Ray) and stores each result.
Where and how a run is executed is `structbench.execution`'s. This package imports none of its
modules itself, so that reading a grid (`grid`) imports neither the store nor the executors.
"""
