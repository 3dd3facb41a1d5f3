"""How fast the underwater camera renders: frames per second at 640 x 480 (one ray a pixel,
Embree through trimesh/embreex, then the image-formation model), for a plane seabed alone and
for a plane seabed with structures (a box, a cylinder, a sphere and a 10 000-triangle heightmap
patch as a mesh), looking 30 degrees down. Printed: frames/s of ``Camera.render`` and the share
of the time in the ray casting (``SceneRays.trace``).

Run: ``.venv/bin/python benchmarks/bench_camera.py [--frames N] [--width W --height H]``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from uvms_sim.scene import HeightmapSeabed, Scene, SceneRays, Shape, Structure
from uvms_sim.scene.seabed import PlaneSeabed
from uvms_sim.sensors.camera import Camera, Intrinsics


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
        "heightmap seabed + 3 structures": Scene(HeightmapSeabed(depths, 0.5, (-5.0, -17.5)), structures),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=20)
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=480)
    args = parser.parse_args()
    intrinsics = Intrinsics.from_fov(args.width, args.height, math.radians(80.0))
    c, s = math.cos(math.radians(-30.0)), math.sin(math.radians(-30.0))
    p = np.array([0.0, 0.0, 4.0])
    print(f"camera {args.width} x {args.height}, {args.frames} frames, noise on")
    for name, scene in scenes().items():
        rays = SceneRays(scene)
        camera = Camera(rays, intrinsics, noise=0.01, rng=np.random.default_rng(0))
        camera.render(np.eye(3), p, tilt=math.radians(-30.0))  # Embree's scene built, caches warm
        t0 = time.perf_counter()
        for k in range(args.frames):
            camera.render(np.eye(3), p + np.array([0.01 * k, 0.0, 0.0]), tilt=math.radians(-30.0))
        render = (time.perf_counter() - t0) / args.frames
        world = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
        directions = camera.directions @ world.T
        t0 = time.perf_counter()
        for _ in range(args.frames):
            rays.trace(p, directions)
        trace = (time.perf_counter() - t0) / args.frames
        triangles = len(scene.triangles()[1])
        print(
            f"  {name} ({triangles} triangles): {1.0 / render:.1f} frames/s ({1e3 * render:.1f} ms a frame, "
            f"{100.0 * trace / render:.0f} % ray casting)"
        )


if __name__ == "__main__":
    main()
