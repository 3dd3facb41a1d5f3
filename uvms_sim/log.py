"""Throttled warnings for bad inputs: say it once per period per kind, never flood the log.

The physics core logs through the standard ``logging`` module (logger ``uvms_sim``); the ROS
node forwards those records to its rclpy logger.
"""

from __future__ import annotations

import logging
import time
from typing import Protocol

logger = logging.getLogger("uvms_sim")


class WarningLog(Protocol):
    """Anything with ``warning(message)``: a ``logging.Logger`` or an rclpy node's logger."""

    def warning(self, message: str) -> object: ...


class Throttle:
    """``warn(key, message)`` logs at most once per ``period`` seconds for each key and counts
    what it held back (reported with the next message of that key)."""

    def __init__(self, period: float = 1.0, log: WarningLog = logger) -> None:
        self.period = period
        self.log = log
        self._last: dict[str, float] = {}
        self._held: dict[str, int] = {}

    def warn(self, key: str, message: str) -> bool:
        now = time.monotonic()
        last = self._last.get(key)
        if last is not None and now - last < self.period:
            self._held[key] = self._held.get(key, 0) + 1
            return False
        held = self._held.pop(key, 0)
        self._last[key] = now
        self.log.warning(message + (f" ({held} more since the last report)" if held else ""))
        return True
