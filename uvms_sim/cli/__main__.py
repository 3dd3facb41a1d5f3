"""``python -m uvms_sim.cli``: the ``uvms-sim`` command line."""

import sys

from . import main

sys.exit(main())
