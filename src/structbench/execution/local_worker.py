"""`python -m structbench.execution.local_worker`: the process a `LocalExecutor` starts for each worker.

A module of its own, which the package never imports, so that `-m` does not run a module the
package's `__init__` has already imported (`structbench.execution.worker`): Python warns of that on
stderr, and a worker's stderr is the log whose last line explains its death.
"""

import sys

from structbench.execution.worker import main

sys.exit(main())
