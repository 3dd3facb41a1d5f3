"""Small helpers for tests that run real rclpy nodes over Fast DDS."""

from __future__ import annotations

import threading
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


@contextmanager
def simulator(namespace: str | None = None, **params):
    """A SimulatorNode in its own executor thread (as in its own process) and a user node;
    ``namespace``: the simulator's (its relative topics under it)."""
    from rclpy.parameter import Parameter

    from uvms_sim.ros.node import SimulatorNode

    with ros_context() as (ctx, executor):
        extra = {"namespace": namespace} if namespace else {}
        sim = SimulatorNode(
            context=ctx, parameter_overrides=[Parameter(k, value=v) for k, v in params.items()], **extra
        )
        sim_executor = SingleThreadedExecutor(context=ctx)
        sim_executor.add_node(sim)
        threading.Thread(target=sim_executor.spin, daemon=True).start()
        user = rclpy.create_node("user", context=ctx)
        executor.add_node(user)
        try:
            yield sim, user, executor
        finally:
            sim_executor.shutdown()
            sim.destroy_node()


def call(executor, client, request):
    assert client.wait_for_service(timeout_sec=5.0)
    future = client.call_async(request)
    assert spin_until(executor, future.done, timeout=5.0)
    return future.result()
