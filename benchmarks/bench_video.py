"""What the camera's video stream costs: milliseconds per image of ``VideoStream.send`` (RGB to
YUV 4:2:0, libx264 ultrafast/zerolatency, RTP packetisation, UDP send to a socket of this
process on loopback) for rendered camera images (a seabed with posts, the camera tilting a
degree an image) at 640 x 480 and 15 images a second, and the datagrams and bytes per second
that reach the socket.

Run: ``.venv/bin/python benchmarks/bench_video.py [--frames N] [--width W --height H]``.
"""

from __future__ import annotations

import argparse
import math
import socket
import time

import numpy as np

from uvms_sim.scene import Scene, SceneRays, Shape, Structure
from uvms_sim.scene.seabed import PlaneSeabed
from uvms_sim.sensors.camera import Camera, Intrinsics
from uvms_sim.viz.video import VideoStream


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--frames", type=int, default=60)
    parser.add_argument("--width", type=int, default=640)
    parser.add_argument("--height", type=int, default=480)
    parser.add_argument("--rate", type=float, default=15.0)
    args = parser.parse_args()
    post = (0.3, 0.3, 4.0)
    posts = tuple(
        Structure(f"post{k}", Shape("box", post, xyz=(4.0 + k, -2.0 + 1.3 * k, 3.0))) for k in range(4)
    )
    camera = Camera(
        SceneRays(Scene(PlaneSeabed(5.0), posts)),
        Intrinsics.from_fov(args.width, args.height, math.radians(80.0)),
        noise=0.01,
        rng=np.random.default_rng(0),
    )
    images = [
        camera.render(np.eye(3), np.zeros(3), math.radians(-30.0 + (k % 60)))[0] for k in range(args.frames)
    ]
    sink = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    sink.bind(("127.0.0.1", 0))
    sink.setblocking(False)
    stream = VideoStream("127.0.0.1", sink.getsockname()[1], args.width, args.height, args.rate)
    times = []
    datagrams = size = 0
    for k, image in enumerate(images):
        t0 = time.perf_counter()
        stream.send(image, k / args.rate)
        times.append(time.perf_counter() - t0)
        try:
            while True:
                size += len(sink.recv(65535))
                datagrams += 1
        except BlockingIOError:
            pass
    stream.close()
    seconds = len(images) / args.rate
    ms = 1e3 * np.array(times[5:])  # the encoder's start-up aside
    size_text = f"{args.width} x {args.height}"
    print(f"video {size_text} at {args.rate:g} images/s, {len(images)} rendered images (noise on)")
    print(f"  send: median {np.median(ms):.1f} ms, 90th percentile {np.percentile(ms, 90):.1f} ms per image")
    print(f"  {datagrams / seconds:.0f} datagrams/s, {8e-6 * size / seconds:.2f} Mbit/s")


if __name__ == "__main__":
    main()
