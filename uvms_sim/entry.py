"""Console-script entry points: the ``simulator`` node and the ``uvms-sim`` command.

They import the real modules only once running, so that a Ctrl-C while numpy, numba or rclpy
load ends the program quietly (exit 130) instead of printing an import traceback.
"""

from __future__ import annotations

import sys


def simulator() -> None:
    """``simulator``: see ``uvms_sim.ros.node``."""
    try:
        from .ros.node import main
    except KeyboardInterrupt:
        sys.exit(130)
    main()


def uvms_sim() -> None:
    """``uvms-sim``: see ``uvms_sim.cli``."""
    try:
        from .cli import main
    except KeyboardInterrupt:
        sys.exit(130)
    sys.exit(main())
