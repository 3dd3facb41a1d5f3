"""The node's Ping devices (``ping1d_port``, ``ping360_port``; 0: off): the first vehicle's
Ping2 as a Ping1D where its altimeter is (its beam along the altimeter's x axis; looking down
from the root link's origin when it has none), and a Ping360 at its root link's origin with the
head turning about the link's z axis, angle 0 along its x axis (forward, scanning the
horizontal plane when the vehicle is level). The altimeter topic stays as it is."""

from __future__ import annotations

import numpy as np

from ..hil.ping_devices import Ping1D as Ping1dDevice
from ..hil.ping_devices import Ping360, PingDevice, PingServer
from ..model.kinematics import placements
from ..model.sensor_specs import SensorSpec
from ..scene import SceneRays
from ..sensors.mount import Mount


def mount_pose(sim, lock, mount: Mount):
    """``pose()`` for a device: the mount's world pose at the simulator's current state."""
    datas = [sim.model.create_data()]

    def pose():
        with lock:  # the model with its state (objects added at run time change both)
            q = np.array(sim.state.q, copy=True)
            model = sim.model
        if model.nbodies != len(datas[0].p_world):
            datas[0] = model.create_data()
        data = datas[0]
        placements(model, data, q)
        return mount.world(data)

    return pose


def ping_servers(
    sim, system, lock, ports: tuple[int, int], bind: str, noise: bool, seed: int
) -> list[PingServer]:
    """The Ping devices the ports ask for, serving."""
    if not any(ports) or not system.vehicles:
        return []
    vehicle = system.vehicles[0]
    model = sim.model
    rays = SceneRays(system.scene)
    root = model.body_index(vehicle.root)
    altimeter = next((s for s in vehicle.sensors if s.type == "altimeter"), None)
    down = SensorSpec("altimeter", "ping1d", vehicle.root, rpy=np.array([0.0, -np.pi / 2, 0.0]))
    spec = altimeter or down
    devices: list[tuple[str, int, PingDevice]] = []
    if ports[0]:
        mount = Mount.of(spec, model.body_index(spec.link))
        devices.append(
            ("ping1d_port", ports[0], Ping1dDevice(rays, mount_pose(sim, lock, mount), noise, seed))
        )
    if ports[1]:
        mount = Mount(root, np.zeros(3), np.eye(3))
        devices.append(
            ("ping360_port", ports[1], Ping360(rays, mount_pose(sim, lock, mount), noise, seed + 1))
        )
    servers: list[PingServer] = []
    for name, port, device in devices:
        try:
            servers.append(PingServer(device, port, bind))
        except OSError as exc:
            for s in servers:
                s.close()
            raise ValueError(
                f"parameter {name}: cannot listen on {bind}:{port} ({exc.strerror or exc})"
            ) from None
    return servers
