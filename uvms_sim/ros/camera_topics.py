"""The cameras a description declares (``vehicles[].sensors``, type ``camera``:
``uvms_sim.sensors.camera``), rendered on a thread of their own at their rate of simulated time
(as fast as the machine allows when it cannot keep up; only the optical frame's transform while
nothing subscribes to its images) and published under the vehicle's namespace:

- ``camera/<name>/image_raw`` (sensor_msgs/Image, rgb8), ``camera/<name>/camera_info``
  (sensor_msgs/CameraInfo: K, P, no distortion) and ``camera/<name>/depth`` (sensor_msgs/Image,
  32FC1, metres along the optical axis, NaN where no surface is; REP 118), framed in
  ``<name>_optical`` (x right, y down, z forward), whose transform from the link (with the
  current tilt) is published on /tf with each image;
- in: ``camera/<name>/tilt`` (std_msgs/Float64, rad, + up about the camera's y axis: the
  BlueROV2's camera mount), clamped to the camera's ``max_tilt``.
"""

from __future__ import annotations

import math
import threading

import numpy as np
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import Float64
from tf2_msgs.msg import TFMessage

from ..model.kinematics import placements
from ..scene import SceneRays
from ..sensors.camera import OPTICAL, camera_of
from ..sensors.mount import Mount
from . import messages


class CameraTopics:
    def __init__(self, node, sim, system, lock, prefix: str, link_frames: list[str], noise: bool, seed: int):
        self.node, self.sim, self.lock = node, sim, lock
        self.link_frames = link_frames
        rays = SceneRays(system.scene)
        many = sum(v.kind == "vehicle" for v in system.vehicles) > 1  # objects have no topics
        self.cameras: list[dict] = []
        for v in system.vehicles:
            ns = f"{v.name}/" if many else ""
            for spec in v.sensors:
                if spec.type != "camera":
                    continue
                rng = np.random.default_rng([seed, 1000 + len(self.cameras)]) if noise else None
                base = f"{ns}camera/{spec.name}"
                cam = {
                    "camera": camera_of(spec, rays, rng),
                    "mount": Mount.of(spec, sim.model.body_index(spec.link)),
                    "period": 1.0 / spec.rate,
                    "next": 0.0,
                    "tilt": spec.value("tilt"),
                    "max_tilt": spec.value("max_tilt"),
                    "frame": prefix + ns + spec.name + "_optical",
                    "image": node.create_publisher(Image, f"{base}/image_raw", 2),
                    "info": node.create_publisher(CameraInfo, f"{base}/camera_info", 2),
                    "depth": node.create_publisher(Image, f"{base}/depth", 2),
                }
                node.create_subscription(Float64, f"{base}/tilt", lambda m, c=cam: self.on_tilt(c, m), 10)
                self.cameras.append(cam)
        self.data = sim.model.create_data()
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run, name="uvms_sim_cameras", daemon=True)
        if self.cameras:
            self.thread.start()

    def on_tilt(self, cam: dict, msg: Float64) -> None:
        if not math.isfinite(msg.data):
            self.node.warn("camera_tilt", f"camera tilt must be a finite angle, got {msg.data}: ignored")
            return
        cam["tilt"] = max(-cam["max_tilt"], min(cam["max_tilt"], float(msg.data)))

    def run(self) -> None:
        while not self.stop_event.is_set():
            with self.lock:  # the model with its state (objects added at run time change both)
                t = float(self.sim.state.t)
                q = np.array(self.sim.state.q, copy=True)
                model = self.sim.model
            due = [c for c in self.cameras if t >= c["next"]]
            if not due:
                self.stop_event.wait(0.002)
                continue
            if model.nbodies != len(self.data.p_world):
                self.data = model.create_data()
            placements(model, self.data, q)
            for cam in due:
                cam["next"] = max(cam["next"] + cam["period"], t)
                try:
                    if any(cam[k].get_subscription_count() for k in ("image", "depth", "info")):
                        self.publish(cam, t)
                    else:  # nobody looks (a recorder counts): no frame rendered, the frame on /tf
                        self.publish_tf(cam, self.node.stamp_at(t))
                except Exception:  # the context is shutting down under us
                    if self.node.context.ok():
                        raise
                    return

    def publish(self, cam: dict, t: float) -> None:
        R, p = cam["mount"].world(self.data)
        image, depth = cam["camera"].render(R, p, cam["tilt"])
        stamp = self.node.stamp_at(t)
        h, w = depth.shape
        msg = Image(height=h, width=w, encoding="rgb8", is_bigendian=0, step=3 * w)
        msg.header.stamp, msg.header.frame_id = stamp, cam["frame"]
        msg.data = image.tobytes()
        cam["image"].publish(msg)
        d = Image(height=h, width=w, encoding="32FC1", is_bigendian=0, step=4 * w)
        d.header = msg.header
        d.data = depth.tobytes()
        cam["depth"].publish(d)
        intr = cam["camera"].intrinsics
        info = CameraInfo(height=h, width=w, distortion_model="plumb_bob")
        info.header = msg.header
        info.k = intr.K.ravel().tolist()
        info.d = [0.0] * 5
        info.r = np.eye(3).ravel().tolist()
        info.p = np.hstack([intr.K, np.zeros((3, 1))]).ravel().tolist()
        cam["info"].publish(info)
        self.publish_tf(cam, stamp)

    def publish_tf(self, cam: dict, stamp) -> None:
        """The optical frame's transform from the camera's link, with the current tilt."""
        mount = cam["mount"]
        c, s = math.cos(cam["tilt"]), math.sin(cam["tilt"])
        tilt = np.array([[c, 0.0, s], [0.0, 1.0, 0.0], [-s, 0.0, c]])
        R_link = mount.R @ tilt @ OPTICAL  # optical axes -> link axes
        tf = messages.transform(stamp, self.link_frames[mount.link], cam["frame"], R_link, mount.position)
        self.node.tf_pub.publish(TFMessage(transforms=[tf]))

    def close(self) -> None:
        self.stop_event.set()
        if self.thread.is_alive() and threading.current_thread() is not self.thread:
            self.thread.join(timeout=5.0)
