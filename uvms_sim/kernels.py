"""Compile every numba kernel of ``uvms_sim.dynamics.compiled`` and the camera's
(``uvms_sim.sensors.camera_kernels``) into numba's cache (the node's message kernels:
``python -m uvms_sim.ros.message_kernels``), once per machine: ``python -m
uvms_sim.kernels`` (``make setup`` runs it). A later process loads them from the cache in
about 0.3 s."""

from __future__ import annotations

import time

import numpy as np

from .dynamics.contact import Contacts
from .dynamics.fast import BatchDynamics, JointTables
from .dynamics.touch import Touch
from .model import load
from .model.configs import resolve
from .scene import PlaneSeabed, Scene, SceneRays, Shape, Structure
from .scene.scene import ContactLaw
from .sensors.camera import Camera, Intrinsics
from .simulator import fast_dynamics


def warm_up() -> None:
    """Compile (or load from the cache) every kernel on a small model with thrusters, except
    ``aba_repeat`` and ``aba_bound`` (the benchmarks' and ``FastDynamics.prepare_aba``'s),
    which compile on first use (about 1 s each)."""
    system = load(resolve("bluerov2_light_arm"))
    fast = fast_dynamics(system)
    q, v = system.initial_q, np.zeros(system.model.nv)
    fast.aba(q, v)
    fast.export(system.model.create_data())
    fast.step(q, v, 0.01, "rk4")
    fast.step(q, v, 0.01, "semi_implicit_euler")
    fast.step_many(q, v, 0.01, 2)
    fast.step_joints(q, v, 0.01, 2, "rk4", np.zeros(system.model.nv), None, 0.0, JointTables(system.model))
    BatchDynamics(fast, 2).step(0.01)
    # the touching pairs' rows (dynamics.touch, compiled.touch_rows): the hull on a plane seabed
    touch = Touch(system.model, Scene(PlaneSeabed(0.1)), ContactLaw())
    contacts = Contacts(system.model, pair_rows=1)
    for _ in range(2):  # found, then found again (at rest: the first detection's rows kept)
        touch.detect(*touch.poses(q), contacts)
    # the camera's kernels (sensors.camera_kernels): a small image of a plane seabed and a ball
    ball = Structure("ball", Shape("sphere", (0.5,), xyz=(3.0, 0.0, 0.0)))
    camera = Camera(SceneRays(Scene(PlaneSeabed(5.0), (ball,))), Intrinsics.from_fov(8, 6, 1.0), noise=0.01,
                    rng=np.random.default_rng(0))  # fmt: skip
    camera.render(np.eye(3), np.zeros(3))


def main() -> None:
    """Compile (or load) the kernels and say how long it took (``uvms-sim kernels``)."""
    t0 = time.perf_counter()
    print("uvms_sim: compiling the physics kernels into numba's cache (once per install)", flush=True)
    warm_up()
    print(f"uvms_sim compiled kernels ready in {time.perf_counter() - t0:.1f} s")


if __name__ == "__main__":
    main()
