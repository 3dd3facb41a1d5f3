"""Console-script entry points: the ``simulator`` node and the ``uvms-sim`` command.

They import the real modules only once running, so that a Ctrl-C while numpy, numba or rclpy
load ends the program quietly (exit 130) instead of printing an import traceback, and a
missing interface package (tf2_msgs, mavros_msgs: no wheel exists) is named with the command
that builds it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

BUILT_HERE = ("tf2_msgs", "mavros_msgs")


def _run(target: Callable[[], Callable[[], int | None]]) -> None:
    try:
        code = target()()
    except KeyboardInterrupt:
        code = 130
    except ImportError as exc:
        if isinstance(exc.__cause__, KeyboardInterrupt):  # Ctrl-C inside an extension's init,
            code = 130  # which pybind11 reports as "ImportError: initialization failed"
        elif isinstance(exc, ModuleNotFoundError) and exc.name in BUILT_HERE:
            print(
                f"error: the ROS interface package {exc.name} is not installed; without a ROS "
                "install, build it into this environment with `uvms-sim build-interfaces`",
                file=sys.stderr,
            )
            code = 1
        else:
            raise
    sys.exit(code)


def _node_main():
    from .ros.node import main

    return main


def _cli_main():
    from .cli import main

    return main


def simulator() -> None:
    """``simulator``: see ``uvms_sim.ros.node``."""
    _run(_node_main)


def uvms_sim() -> None:
    """``uvms-sim``: see ``uvms_sim.cli``."""
    _run(_cli_main)
