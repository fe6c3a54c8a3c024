"""Where models are executed away from structbench's own process: worker processes, Ray tasks.

`worker` fits and predicts one run from a `WorkOrder`, away from the store, and answers a
`WorkResult`; `local_worker` is the process a local executor starts for it; `executors` runs
orders on a local process pool or on Ray; `processes` finds and ends what a model left running;
`supervised` runs `structbench run`'s seeds in one such worker (the runner's `Supervisor`), and
`verify` makes bundled reference runs again in it (`structbench reference verify`); `collector` sets
the garbage collector's thresholds of the processes structbench starts. `sweep` drives
its grids through the executors. This package imports none of its modules itself, so that a worker
process imports only what a run needs (not a driver's store and cells).
"""
