"""The cameras a description declares (``vehicles[].sensors``, type ``camera``:
``uvms_sim.sensors.camera``; the scene and the bodies where they are, ``sensors.body_rays``, but
the link the camera sits in: its vehicle's hull is not seen from inside), rendered on a thread
of their own at their rate of simulated time (as fast as the machine allows when it cannot keep
up; while nothing subscribes to its images, nothing rendered and only the optical frame's
transform and the lights' level for their readers) and published
under the vehicle's namespace:

- ``camera/<name>/image_raw`` (sensor_msgs/Image, rgb8), ``camera/<name>/camera_info``
  (sensor_msgs/CameraInfo: K, P, no distortion) and ``camera/<name>/depth`` (sensor_msgs/Image,
  32FC1, metres along the optical axis, NaN where no surface is; REP 118), framed in
  ``<name>_optical`` (x right, y down, z forward), whose transform from the link (with the
  current tilt) is published on /tf with each image; with the browser view, the image on its
  ``camera/<name>`` 2D view (``viz.rerun_view``);
- in: ``camera/<name>/tilt`` (std_msgs/Float64, rad, + up about the camera's y axis: the
  BlueROV2's camera mount), clamped to the camera's ``max_tilt``;
- ``camera/<name>/lights`` (std_msgs/Float64, 0: off to 1: full), at the camera's rate (with
  each image, or without one): the level of the vehicle's lights (its ``light`` entries, each
  lighting the image at that level: ``sensors.camera``'s lamps).

With ArduSub SITL in the loop (``servo_outputs``: the PWMs of its last frame), or the node's
emulated ArduSub (``mavros_shim``: RC override channel 8 the tilt rate, 9 the lights), the
vehicle's camera mount and lights follow its servo outputs as on the real vehicle
(``uvms_sim.actuators.camera_mount``): a change of the tilt servo's PWM turns the camera (a
tilt command on the topic holds until the next change), the lights' PWM sets their level.

One camera's images also go out as H.264 over RTP (``video``: ``uvms_sim.viz.video``), sent
from this thread as each image is rendered.
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable

import numpy as np
from sensor_msgs.msg import CameraInfo, Image
from std_msgs.msg import Float64
from tf2_msgs.msg import TFMessage

from ..actuators.camera_mount import CameraMount
from ..model.kinematics import placements
from ..scene import SceneRays
from ..sensors.body_rays import BodyRays
from ..sensors.camera import OPTICAL, camera_of, lamp_of, lamp_rows
from ..sensors.mount import Mount
from ..viz.video import VideoStream
from . import messages
from .messages import wanted

WAIT_MIN, WAIT_MAX = 0.002, 0.05  # s of wall time between looks at the simulated time (_wait)

ServoOutputs = Callable[[int], "tuple[int, ...] | None"]


class CameraTopics:
    """``video``: ``{"camera", "host", "port", "sdp"}`` (``camera``: ``""`` for the first one, or a
    camera's ``<name>`` or ``<vehicle>/<name>``); ``mount``: the servo outputs of the tilt and
    the lights and the tilt servo's PWMs (``CameraMount``); ``servo_outputs(vehicle)``: the
    autopilot's servo PWMs of a vehicle (index in the description), None when none drives it."""

    def __init__(
        self, node, sim, system, lock, prefix: str, link_frames: list[str], noise: bool, seed: int,
        video: dict | None = None, mount: tuple[int, int, tuple[float, float]] = (10, 9, (1100.0, 1900.0)),
        servo_outputs: ServoOutputs | None = None,
    ) -> None:  # fmt: skip
        self.node, self.sim, self.lock = node, sim, lock
        self.link_frames = link_frames
        self.servo_outputs = servo_outputs
        rays = SceneRays(system.scene)
        many = sum(v.kind == "vehicle" for v in system.vehicles) > 1  # objects have no topics
        self.cameras: list[dict] = []
        tilt_servo, lights_servo, tilt_pwm = mount
        for index, v in enumerate(system.vehicles):
            ns = f"{v.name}/" if many else ""
            for spec in v.sensors:
                if spec.type != "camera":
                    continue
                rng = np.random.default_rng([seed, 1000 + len(self.cameras)]) if noise else None
                base = f"{ns}camera/{spec.name}"
                link = sim.model.body_index(spec.link)
                seen = BodyRays(rays, sim.model, skip={link})  # the bodies, but the one it sits in
                cam = {
                    "name": ns + spec.name,
                    "vehicle": index,
                    "camera": camera_of(spec, seen, rng),
                    "rays": seen,
                    "spec": spec,
                    "lamp_specs": [s for s in v.sensors if s.type == "light"],
                    "mount": Mount.of(spec, link),
                    "period": 1.0 / spec.rate,
                    "next": 0.0,
                    "tilt": spec.value("tilt"),
                    "max_tilt": spec.value("max_tilt"),
                    "frame": prefix + ns + spec.name + "_optical",
                    "picture": f"camera/{ns}{spec.name}",
                    "image": node.create_publisher(Image, f"{base}/image_raw", 2),
                    "info": node.create_publisher(CameraInfo, f"{base}/camera_info", 2),
                    "depth": node.create_publisher(Image, f"{base}/depth", 2),
                    "lights_pub": node.create_publisher(Float64, f"{base}/lights", 2),
                    "lights": 0.0,
                    "lamps": [
                        (lamp_of(s), Mount.of(s, sim.model.body_index(s.link)))
                        for s in v.sensors
                        if s.type == "light"
                    ],
                    "servos": CameraMount(spec.value("max_tilt"), tilt_servo, lights_servo, tilt_pwm),
                    "servo_tilt": None,
                    "rate": spec.rate,
                }
                node.create_subscription(Float64, f"{base}/tilt", lambda m, c=cam: self.on_tilt(c, m), 10)
                self.cameras.append(cam)
        self.video: VideoStream | None = None
        self.video_camera: dict | None = None
        if video is not None:
            self.video_camera, self.video = self._video(video)
        self.data = sim.model.create_data()
        self.model = sim.model
        self.stop_event = threading.Event()
        self.thread = threading.Thread(target=self.run, name="uvms_sim_cameras", daemon=True)
        if self.cameras:
            self.thread.start()

    def _video(self, video: dict) -> tuple[dict, VideoStream]:
        """The camera whose images are streamed and its stream; ValueError in one line when
        there is no such camera."""
        names = [c["name"] for c in self.cameras]
        wanted = video["camera"]
        if not names:
            raise ValueError("parameter video_port: the description declares no camera to stream")
        if wanted:
            found = [c for c in self.cameras if wanted in (c["name"], c["name"].split("/")[-1])]
            if not found:
                raise ValueError(
                    f"parameter video_camera: no camera {wanted!r} (the cameras: {', '.join(names)})"
                )
            cam = found[0]
        else:
            cam = self.cameras[0]
        intr = cam["camera"].intrinsics
        stream = VideoStream(
            video["host"], video["port"], intr.width, intr.height, cam["rate"], video["sdp"],
            name=f"uvms_sim camera {cam['name']}", throttle=self.node.throttle,
        )  # fmt: skip
        return cam, stream

    def _servos(self, vehicle: int) -> tuple[int, ...] | None:
        return self.servo_outputs(vehicle) if self.servo_outputs is not None else None

    def follow_servos(self, cam: dict, pwm: tuple[int, ...] | None) -> None:
        """The camera's tilt and lights from the autopilot's servo outputs ``pwm``, if any."""
        if pwm is None:
            return
        servos: CameraMount = cam["servos"]
        tilt = servos.tilt(pwm)
        if tilt is not None and tilt != cam["servo_tilt"]:  # the servo moved: the camera follows
            cam["servo_tilt"] = cam["tilt"] = tilt
        lights = servos.lights(pwm)
        if lights is not None:
            cam["lights"] = lights

    def on_tilt(self, cam: dict, msg: Float64) -> None:
        if not math.isfinite(msg.data):
            self.node.warn("camera_tilt", f"camera tilt must be a finite angle, got {msg.data}: ignored")
            return
        cam["tilt"] = max(-cam["max_tilt"], min(cam["max_tilt"], float(msg.data)))

    def _wait(self, t: float, seen: tuple[float, float]) -> tuple[float, float]:
        """Sleep until the next camera is due at the pace simulated time last went (between
        ``WAIT_MIN`` and ``WAIT_MAX`` of wall time: a waking thread takes the GIL from the
        physics, so it wakes about when it has work, not every few milliseconds); the
        (simulated, wall) time it woke."""
        wall = time.monotonic()
        t0, wall0 = seen
        pace = (t - t0) / (wall - wall0) if wall > wall0 and t > t0 else 0.0
        ahead = min(c["next"] for c in self.cameras) - t
        delay = ahead / pace if pace > 0.0 else WAIT_MAX  # paused, or just started
        self.stop_event.wait(min(WAIT_MAX, max(WAIT_MIN, delay)))
        return t, wall

    def run(self) -> None:
        seen = (float(self.sim.state.t), time.monotonic())
        while not self.stop_event.is_set():
            # whether a camera is due, without the lock (a float read; the physics thread keeps
            # the lock most of the time)
            t_now = float(self.sim.state.t)
            if not any(t_now >= c["next"] for c in self.cameras):
                seen = self._wait(t_now, seen)
                continue
            try:  # who looks (a recorder counts), asked without the lock
                watched = {id(c) for c in self.cameras if self._watched(c)}
            except Exception:  # the context is shutting down under us
                if self.node.context.ok():
                    raise
                return
            with self.lock:  # the model with its state (objects added at run time change both)
                t = float(self.sim.state.t)
                due = [c for c in self.cameras if t >= c["next"]]
                pwms = {c["vehicle"]: self._servos(c["vehicle"]) for c in due}  # at t, as the state
                render = any(id(c) in watched for c in due)
                if render:
                    q = np.array(self.sim.state.q, copy=True)
                    model = self.sim.model
            if not due:
                seen = self._wait(t, seen)
                continue
            if render:
                if model is not self.model:  # objects added: the cameras see them too
                    self._see(model)
                placements(model, self.data, q)
            for cam in due:
                cam["next"] = max(cam["next"] + cam["period"], t)
                try:
                    self.follow_servos(cam, pwms[cam["vehicle"]])
                    if id(cam) in watched:
                        self.publish(cam, t)
                    else:  # nobody looks: no frame rendered, the frame on /tf and the lights if read
                        if wanted(self.node.tf_pub):
                            self.publish_tf(cam, self.node.stamp_at(t))
                        if wanted(cam["lights_pub"]):
                            cam["lights_pub"].publish(Float64(data=float(cam["lights"])))
                except Exception:  # the context is shutting down under us
                    if self.node.context.ok():
                        raise
                    return

    def _watched(self, cam: dict) -> bool:
        """Whether the camera's images are read (or streamed): only then is it rendered."""
        if cam is self.video_camera and self.video is not None:
            return True
        return any(wanted(cam[k]) for k in ("image", "depth", "info"))

    def _see(self, model) -> None:
        """The model changed (objects added at run time): the state's layout and the bodies
        seen anew."""
        self.model, self.data = model, model.create_data()
        for cam in self.cameras:
            link = model.body_index(cam["spec"].link)
            old = cam["camera"]
            cam["rays"] = BodyRays(cam["rays"].scene_rays, model, skip={link})
            cam["camera"] = camera_of(cam["spec"], cam["rays"], old.rng)
            cam["mount"] = Mount.of(cam["spec"], link)
            cam["lamps"] = [(lamp_of(s), Mount.of(s, model.body_index(s.link))) for s in cam["lamp_specs"]]

    def publish(self, cam: dict, t: float) -> None:
        R, p = cam["mount"].world(self.data)
        cam["rays"].place(self.data.R_world, self.data.p_world)
        lamps = None
        if cam["lamps"] and cam["lights"] > 0.0:  # each light's beam along its x axis
            placed = [(lamp, *mount.world(self.data)) for lamp, mount in cam["lamps"]]
            lamps = lamp_rows([(lamp, pos, R_l[:, 0]) for lamp, R_l, pos in placed], cam["lights"])
        image, depth = cam["camera"].render(R, p, cam["tilt"], lamps)
        if cam is self.video_camera and self.video is not None:
            self.video.send(image, t)
        stamp = self.node.stamp_at(t)
        h, w = depth.shape
        msg = Image(height=h, width=w, encoding="rgb8", is_bigendian=0, step=3 * w)
        msg.header.stamp, msg.header.frame_id = stamp, cam["frame"]
        msg.data = image.tobytes()
        cam["image"].publish(msg)
        view = getattr(self.node, "view", None)
        if view is not None:  # the browser view (viz.rerun_view)
            view.log_picture(cam["picture"], t, image)
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
        cam["lights_pub"].publish(Float64(data=float(cam["lights"])))
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
        if self.video is not None:
            self.video.close()
            self.video = None
