"""The imaging sonars a description declares (``vehicles[].sensors``, type ``imaging_sonar``:
``uvms_sim.sensors.imaging_sonar``; the scene and the other bodies where they are,
``sensors.body_rays``), pinged on a thread of their own at their rate of simulated
time (as fast as the machine allows when it cannot keep up) and published under the vehicle's
namespace on ``sensors/<name>`` (marine_acoustic_msgs/ProjectedSonarImage: 8-bit intensities,
one row per range bin, the beams from port to starboard; ``beam_directions`` and ``ranges``
give the geometry, ``ping_info`` the frequency, sound speed and -3 dB beam widths), framed in
``<name>``: marine_acoustic_msgs's sonar frame (x up, y to starboard, z forward along the
middle of the fan), published on /tf_static under its link. With the browser view, each ping's
fan seen from above on its ``sonar/<name>`` 2D view (``viz.rerun_view``).
"""

from __future__ import annotations

import threading

import numpy as np
from geometry_msgs.msg import Vector3
from marine_acoustic_msgs.msg import PingInfo, ProjectedSonarImage, SonarImageData

from ..model.kinematics import placements
from ..scene import SceneRays
from ..sensors.body_rays import BodyRays
from ..sensors.imaging_sonar import MESSAGE_AXES, SOUND_SPEED, ImagingSonar, fan, fan_lookup, imaging_sonar_of
from ..sensors.mount import Mount
from . import messages

FAN_WIDTH = 480  # pixels across the fan drawn in the browser view


def sonar_message(sonar: ImagingSonar) -> ProjectedSonarImage:
    """The parts of a sonar's message that do not change from ping to ping."""
    msg = ProjectedSonarImage()
    msg.ping_info = PingInfo(
        frequency=float(sonar.frequency),
        sound_speed=SOUND_SPEED,
        tx_beamwidths=[float(sonar.vfov)],
        rx_beamwidths=[float(sonar.beam_width)],
    )
    msg.beam_directions = [Vector3(x=float(x), y=float(y), z=float(z)) for x, y, z in sonar.beam_directions()]
    msg.ranges = sonar.ranges.astype(np.float32)
    msg.image = SonarImageData(
        is_bigendian=False, dtype=SonarImageData.DTYPE_UINT8, beam_count=sonar.beam_count
    )
    return msg


class SonarTopics:
    def __init__(self, node, sim, system, lock, prefix: str, link_frames: list[str], noise: bool, seed: int):
        self.node, self.sim, self.lock = node, sim, lock
        self.link_frames = link_frames
        rays = SceneRays(system.scene)
        many = len(system.vehicles) > 1
        self.sonars: list[dict] = []
        for v in system.vehicles:
            ns = f"{v.name}/" if many else ""
            for spec in v.sensors:
                if spec.type != "imaging_sonar":
                    continue
                rng = np.random.default_rng([seed, 2000 + len(self.sonars)]) if noise else None
                link = sim.model.body_index(spec.link)
                seen = BodyRays(rays, sim.model, skip={link})  # the bodies, but the one it sits in
                sonar = imaging_sonar_of(spec, seen, rng)
                self.sonars.append(
                    {
                        "sonar": sonar,
                        "mount": Mount.of(spec, link),
                        "rays": seen,
                        "period": 1.0 / spec.rate,
                        "next": 0.0,
                        "frame": prefix + ns + spec.name,
                        "picture": f"sonar/{ns}{spec.name}",
                        "fan": fan_lookup(sonar.ranges, sonar.azimuths, FAN_WIDTH),
                        "msg": sonar_message(sonar),
                        "pub": node.create_publisher(ProjectedSonarImage, f"{ns}sensors/{spec.name}", 2),
                    }
                )
        self.data = sim.model.create_data()
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run, name="uvms_sim_sonars", daemon=True)
        if self.sonars:
            self.thread.start()

    def static_transforms(self, stamp) -> list:
        """Each sonar's frame (marine_acoustic_msgs's axes) under its link's TF frame."""
        out = []
        for s in self.sonars:
            m = s["mount"]
            out.append(
                messages.transform(
                    stamp, self.link_frames[m.link], s["frame"], m.R @ MESSAGE_AXES, m.position
                )
            )
        return out

    def run(self) -> None:
        while not self.stop_event.is_set():
            with self.lock:
                t = float(self.sim.state.t)
                q = np.array(self.sim.state.q, copy=True)
            due = [s for s in self.sonars if t >= s["next"]]
            if not due:
                self.stop_event.wait(0.002)
                continue
            placements(self.sim.model, self.data, q)
            for s in due:
                s["next"] = max(s["next"] + s["period"], t)
                try:
                    self.publish(s, t)
                except Exception:  # the context is shutting down under us
                    if self.node.context.ok():
                        raise
                    return

    def publish(self, s: dict, t: float) -> None:
        R, p = s["mount"].world(self.data)
        s["rays"].place(self.data.R_world, self.data.p_world)
        image = s["sonar"].ping(R, p)
        msg = s["msg"]
        msg.header.stamp, msg.header.frame_id = self.node.stamp_at(t), s["frame"]
        msg.image.data = image.tobytes()
        s["pub"].publish(msg)
        view = getattr(self.node, "view", None)
        if view is not None:  # the browser view (viz.rerun_view): the fan seen from above
            view.log_picture(s["picture"], t, fan(image, s["fan"]))

    def close(self) -> None:
        self.stop_event.set()
        if self.thread.is_alive() and threading.current_thread() is not self.thread:
            self.thread.join(timeout=5.0)
