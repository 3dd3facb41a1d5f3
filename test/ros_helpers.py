"""Small helpers for tests that run real rclpy nodes over Fast DDS."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import rclpy
from rclpy.context import Context
from rclpy.executors import SingleThreadedExecutor


@contextmanager
def ros_context() -> Iterator[tuple[Context, SingleThreadedExecutor]]:
    """A private rclpy context and an executor on it, shut down afterwards."""
    ctx = Context()
    rclpy.init(context=ctx)
    executor = SingleThreadedExecutor(context=ctx)
    try:
        yield ctx, executor
    finally:
        executor.shutdown()
        rclpy.shutdown(context=ctx)


def spin_until(
    executor: SingleThreadedExecutor,
    done: Callable[[], bool],
    timeout: float = 10.0,
    every: Callable[[], None] | None = None,
) -> bool:
    """Spin until ``done()`` or the timeout; ``every`` runs between spins (e.g. re-publish)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if done():
            return True
        if every is not None:
            every()
        executor.spin_once(timeout_sec=0.05)
    return done()
