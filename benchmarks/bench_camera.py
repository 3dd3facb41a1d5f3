"""How fast the underwater camera renders: frames per second at 640 x 480 (one ray a pixel,
Embree through trimesh/embreex, then the image-formation model), for a plane seabed alone, with
three structures (a box, a cylinder and a sphere), and for a 10 000-triangle heightmap seabed
patch with the three (every ray then goes to Embree), and the plane seabed, the three and the
bodies (``BodyRays``: a BlueROV2's light arm under the camera and three free objects in view,
placed anew each frame), looking 30 degrees down, noise on.
Printed for ``Camera.render`` (compiled): frames per wall second, CPU milliseconds a frame (what
a frame costs on a shared machine) and the share of that in Embree (``SceneRays.mesh_hits`` of
the rays it is asked for); and, for comparison, frames per wall second of
``Camera.render_plainly`` (the same image in plain numpy, every ray through
``SceneRays.trace``).

Run: ``.venv/bin/python benchmarks/bench_camera.py [--frames N] [--width W --height H]``.
"""

from __future__ import annotations

import argparse
import math
import tempfile
import time
from pathlib import Path

import numpy as np

from uvms_sim.model.description import load
from uvms_sim.model.kinematics import placements
from uvms_sim.scene import HeightmapSeabed, Scene, SceneRays, Shape, Structure
from uvms_sim.scene.seabed import PlaneSeabed
from uvms_sim.sensors.body_rays import BodyRays
from uvms_sim.sensors.camera import Camera, Intrinsics, tilted
from uvms_sim.sensors.camera_kernels import world_rays


def scenes() -> dict[str, Scene]:
    structures = (
        Structure("box", Shape("box", (2.0, 4.0, 3.0), xyz=(8.0, -1.0, 8.5))),
        Structure("pile", Shape("cylinder", (0.4, 10.0), xyz=(6.0, 3.0, 5.0))),
        Structure("buoy", Shape("sphere", (0.5,), xyz=(5.0, 0.0, 4.0))),
    )
    x = np.linspace(0.0, 1.0, 71)
    depths = 10.0 + 0.3 * np.sin(6.0 * x)[:, None] * np.cos(5.0 * x)[None, :]
    return {
        "plane seabed": Scene(PlaneSeabed(10.0)),
        "plane seabed + 3 structures": Scene(PlaneSeabed(10.0), structures),
        "heightmap seabed + 3 structures": Scene(HeightmapSeabed(depths, 0.5, (-5.0, -17.5)), structures),
    }


BODIES = """
scene:
  seabed: {type: plane, depth: 10.0}
  structures:
    - {name: box, shape: box, size: [2.0, 4.0, 3.0], xyz: [8.0, -1.0, 8.5]}
    - {name: pile, shape: cylinder, size: [0.4, 10.0], xyz: [6.0, 3.0, 5.0]}
    - {name: buoy, shape: sphere, size: [0.5], xyz: [5.0, 0.0, 4.0]}
  objects:
    - {name: crate, shape: box, size: [0.6, 0.4, 0.4], mass: 20.0, xyz: [3.0, 0.8, 5.5]}
    - {name: ball, shape: sphere, size: [0.3], mass: 5.0, xyz: [4.0, -1.0, 6.0]}
    - {name: drum, shape: cylinder, size: [0.3, 0.9], mass: 30.0, xyz: [5.0, 1.5, 6.5]}
"""


def bodies_rays(tmp: Path) -> tuple[BodyRays, np.ndarray, np.ndarray]:
    """The BlueROV2 with the light arm (camera on the hull, 0.2 m ahead of its centre, the hull
    left out) 4 m deep, with ``BODIES``: the rays and the camera's pose."""
    root = Path(__file__).resolve().parents[1]
    text = (root / "config" / "bluerov2_light_arm.yaml").read_text()
    text = text.replace("position: [0.0, 0.0, 2.0]", "position: [0.0, 0.0, 4.0]") + BODIES
    (tmp / "bodies.yaml").write_text(text)
    system = load(tmp / "bodies.yaml")
    hull = system.model.body_index("base_link")
    data = system.model.create_data()
    placements(system.model, data, system.initial_q)
    rays = BodyRays(SceneRays(system.scene), system.model, skip={hull})
    rays.place(data.R_world, data.p_world)
    return rays, data.R_world, data.p_world


def timed(render, frames: int) -> tuple[float, float]:
    """(wall, CPU) seconds a frame of ``render(k)`` for k in range(frames), after one."""
    render(0)
    w0, c0 = time.perf_counter(), time.process_time()
    for k in range(frames):
        render(k)
    return (time.perf_counter() - w0) / frames, (time.process_time() - c0) / frames


def bench(scene: Scene | tuple[BodyRays, np.ndarray, np.ndarray], intrinsics: Intrinsics, frames: int) -> str:
    """One scene's line: frames/s and CPU a frame of ``render``, Embree's share, frames/s of
    ``render_plainly``. With bodies, they are placed anew before each frame (as the node does)."""
    tilt = math.radians(-30.0)
    p, step = np.array([0.0, 0.0, 4.0]), np.array([0.01, 0.0, 0.0])
    if isinstance(scene, Scene):
        rays: SceneRays | BodyRays = SceneRays(scene)
        scene_rays = rays

        def place(k: int) -> None:
            pass
    else:
        rays, R_world, p_world = scene
        scene_rays = rays.scene_rays
        p = p_world[0] + np.array([0.2, 0.0, 0.0])

        def place(k: int) -> None:
            rays.place(R_world, p_world + k * step)

    camera = Camera(rays, intrinsics, noise=0.01, rng=np.random.default_rng(0))

    def render(k: int) -> None:
        place(k)
        camera.render(np.eye(3), p + k * step, tilt)

    def render_plainly(k: int) -> None:
        place(k)
        camera.render_plainly(np.eye(3), p + k * step, tilt)

    wall, cpu = timed(render, frames)
    plain, _ = timed(render_plainly, max(1, frames // 10))
    frame = camera._frame  # the rays Embree is asked for, as render gathers them
    height = float(p @ frame.up + frame.depth * -frame.up[2])
    m = world_rays(
        frame.rays, tilted(tilt), p, frame.up, height, frame.plane, camera.max_range, frame.lo, frame.hi,
        frame.mesh, frame.plane_distance, frame.dirs, frame.tfar, frame.index,
    )  # fmt: skip
    tfar = frame.tfar[:m].copy()
    _, embree = timed(lambda k: scene_rays.mesh_hits(p, frame.dirs[:m], tfar.copy()), frames)
    return (
        f"{1.0 / wall:.1f} frames/s ({1e3 * cpu:.1f} ms of CPU a frame, {100.0 * embree / cpu:.0f} % "
        f"in Embree's scene for {m} rays); plain numpy {1.0 / plain:.1f} frames/s"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=30)
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=480)
    args = parser.parse_args()
    intrinsics = Intrinsics.from_fov(args.width, args.height, math.radians(80.0))
    print(f"camera {args.width} x {args.height}, {args.frames} frames, noise on")
    for name, scene in scenes().items():
        triangles = len(scene.triangles()[1])
        print(f"  {name} ({triangles} triangles): {bench(scene, intrinsics, args.frames)}")
    with tempfile.TemporaryDirectory() as tmp:
        seen = bodies_rays(Path(tmp))
        triangles = len(seen[0].face_surfaces)
        name = f"plane seabed + 3 structures + arm and 3 objects ({triangles} body triangles)"
        print(f"  {name}: {bench(seen, intrinsics, args.frames)}")


if __name__ == "__main__":
    main()
