"""`python -m structbench.cli ...`: the `structbench` command, run by the interpreter at hand."""

import sys

from structbench.cli.main import main

sys.exit(main())
