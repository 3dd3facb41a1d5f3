"""How fast the imaging sonar pings: microseconds per ping at the default resolution (the Oculus
M750d's 750 kHz mode: 512 beams across 130 degrees, 20 degrees high, 1000 range bins of 2 cm)
for a plane seabed alone and for a heightmap seabed with structures, the sonar 4 m above the
seabed looking 10 degrees down. Printed: us per ping of ``ImagingSonar.ping`` (rays, beams,
speckle and 8-bit image), the rays cast a ping, the share of the time in the ray casting
(``SceneRays.hits``) and the pings per second that leaves.

Run: ``.venv/bin/python benchmarks/bench_imaging_sonar.py [--pings N]``.
"""

from __future__ import annotations

import argparse
import math
import time

import numpy as np

from uvms_sim.model.sensor_specs import SensorSpec
from uvms_sim.scene import HeightmapSeabed, Scene, SceneRays, Shape, Structure
from uvms_sim.scene.seabed import PlaneSeabed
from uvms_sim.sensors.imaging_sonar import imaging_sonar_of


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
    parser.add_argument("--pings", type=int, default=20)
    args = parser.parse_args()
    spec = SensorSpec("imaging_sonar", "fls", "base")
    tilt = math.radians(10.0)
    c, s = math.cos(tilt), math.sin(tilt)
    R = np.array([[c, 0.0, -s], [0.0, 1.0, 0.0], [s, 0.0, c]])  # x forward, 10 degrees down
    p = np.array([0.0, 0.0, 6.0])
    print(f"imaging sonar (defaults), {args.pings} pings, speckle and noise on")
    for name, scene in scenes().items():
        rays = SceneRays(scene)
        sonar = imaging_sonar_of(spec, rays, np.random.default_rng(0))
        sonar.ping(R, p)  # Embree's scene built, caches warm
        t0 = time.perf_counter()
        for k in range(args.pings):
            sonar.ping(R, p + np.array([0.01 * k, 0.0, 0.0]))
        ping = (time.perf_counter() - t0) / args.pings
        directions = sonar.directions(R)
        t0 = time.perf_counter()
        for _ in range(args.pings):
            rays.hits(p, directions)
        cast = (time.perf_counter() - t0) / args.pings
        shape = f"{len(sonar.ranges)} x {sonar.beam_count}"
        print(
            f"  {name:34s} {1e6 * ping:9.0f} us/ping ({shape}, {len(directions)} rays; "
            f"ray casting {100 * cast / ping:.0f} %), {1.0 / ping:5.1f} pings/s"
        )


if __name__ == "__main__":
    main()
