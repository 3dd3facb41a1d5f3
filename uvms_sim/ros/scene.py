"""What RViz (or Foxglove) needs to show the simulation: the URDF on ``robot_description``
(std_msgs/String, transient local, as robot_state_publisher offers it; link names are the TF
frames), and a MarkerArray on ``markers``: each thruster's thrust as an arrow (green forward,
red reverse; ``viz.scene.ARROW_SCALE`` m per newton), the water surface and the seabeds as
translucent plates, and the water current at each vehicle as a blue arrow (1 m per m/s), all in
the world frame (``frame_id``)."""

from __future__ import annotations

from geometry_msgs.msg import Point
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, QoSProfile
from std_msgs.msg import ColorRGBA, String
from visualization_msgs.msg import Marker, MarkerArray

from ..model.naming import tf_names
from ..model.system import System
from ..model.urdf_writer import urdf_text
from ..viz.scene import SURFACE_HALF_SIZE, Frame, SceneState, scene_meshes, world_planes

FORWARD, REVERSE, WATER, SEABED, CURRENT, TETHER = (
    (0.15, 0.8, 0.25, 1.0), (0.85, 0.2, 0.15, 1.0), (0.25, 0.55, 0.85, 0.25), (0.6, 0.5, 0.35, 0.6),
    (0.1, 0.3, 0.95, 1.0), (0.95, 0.8, 0.1, 1.0),
)  # fmt: skip
STRUCTURE = (0.63, 0.63, 0.59, 1.0)


def _color(rgba) -> ColorRGBA:
    return ColorRGBA(r=float(rgba[0]), g=float(rgba[1]), b=float(rgba[2]), a=float(rgba[3]))


def _point(p) -> Point:
    return Point(x=float(p[0]), y=float(p[1]), z=float(p[2]))


class Scene:
    """Publishes ``robot_description`` once (latched) and ``markers`` on each ``publish``."""

    def __init__(self, node: Node, system: System, prefix: str, frame_id: str) -> None:
        latched = QoSProfile(depth=1, durability=DurabilityPolicy.TRANSIENT_LOCAL)
        self.description = node.create_publisher(String, "robot_description", latched)
        self.markers = node.create_publisher(MarkerArray, "markers", 10)
        self.frame_id = frame_id
        self.prefix = prefix
        self.rebuild(system)

    def rebuild(self, system: System) -> None:
        """Follow ``system`` (the same description with other free objects): its URDF on
        ``robot_description`` again, and its link poses in the frames."""
        self.description.publish(String(data=urdf_text(system, self.prefix, self.frame_id)))
        self.state = SceneState(system)
        _, free = tf_names(system, self.prefix)
        vehicles = {v.name for v in system.vehicles if v.kind == "vehicle"}
        self.roots = [vf.root for vf in free if vf.name in vehicles]  # the current at each vehicle
        self.thruster_names = [t.name for t in system.thrusters]
        self.breaking = {t.name: t.properties["breaking_strength"] for t in system.tethers}
        self.fixed = self._fixed_geometry(system)
        self._wave_points: list[Point] = []  # the wave surface's triangle corners (``_wave_mesh``)

    def _fixed_geometry(self, system: System) -> list[Marker]:
        """The scene (the seabed and the structures, ``scene.Scene``) as triangle lists, built once
        and sent with every marker array (stamped then)."""
        out = []
        for k, plane in enumerate(world_planes(system)):
            if plane.kind == "seabed":
                h = SURFACE_HALF_SIZE
                corners = [(x, y, plane.height(x, y) - 0.01) for x, y in ((-h, -h), (h, -h), (h, h), (-h, h))]
                m = self._marker(None, "seabed", k, Marker.TRIANGLE_LIST, SEABED)
                m.scale.x = m.scale.y = m.scale.z = 1.0
                m.points = [Point(x=x, y=y, z=z) for x, y, z in (corners[i] for i in (0, 1, 2, 0, 2, 3))]
                out.append(m)
        for k, (kind, vertices, faces) in enumerate(scene_meshes(system)):
            m = self._marker(None, kind, k, Marker.TRIANGLE_LIST, SEABED if kind == "seabed" else STRUCTURE)
            m.scale.x = m.scale.y = m.scale.z = 1.0
            m.points = [Point(x=x, y=y, z=z) for x, y, z in vertices[faces.ravel()].tolist()]
            out.append(m)
        return out

    def _marker(self, stamp, ns: str, k: int, kind: int, rgba) -> Marker:
        m = Marker()
        if stamp is not None:
            m.header.stamp = stamp
        m.header.frame_id = self.frame_id
        m.ns, m.id, m.type, m.action = ns, k, kind, Marker.ADD
        m.pose.orientation.w = 1.0
        m.color = _color(rgba)
        return m

    def _plate(self, stamp, ns: str, k: int, z: float, rgba) -> Marker:
        m = self._marker(stamp, ns, k, Marker.CUBE, rgba)
        m.pose.position.z = z
        m.scale.x = m.scale.y = 2.0 * SURFACE_HALF_SIZE
        m.scale.z = 0.01
        return m

    def _wave_mesh(self, stamp, surface) -> Marker:
        """The wave surface (``viz.water.wave_surface``) as one triangle list. Its points are
        the same objects at every frame, moved: building 864 of them took 2 ms a frame, setting
        their coordinates a third of that."""
        vertices, triangles = surface
        m = self._marker(stamp, "water_surface", 0, Marker.TRIANGLE_LIST, WATER)
        m.scale.x = m.scale.y = m.scale.z = 1.0
        corners = vertices[triangles.ravel()].tolist()
        if len(self._wave_points) != len(corners):
            self._wave_points = [Point() for _ in corners]
        for point, (x, y, z) in zip(self._wave_points, corners, strict=True):
            point.x, point.y, point.z = x, y, z
        m.points = self._wave_points
        return m

    def _tether(self, stamp, k: int, name: str, nodes, tension: float) -> Marker:
        """A tether through its nodes, yellow to red as its tension goes to its breaking strength."""
        breaking = self.breaking.get(name, 0.0)
        share = min(1.0, tension / breaking) if breaking > 0.0 else 0.0
        rgba = (TETHER[0], TETHER[1] * (1.0 - share), TETHER[2], TETHER[3])
        m = self._marker(stamp, "tether", k, Marker.LINE_STRIP, rgba)
        m.scale.x = 0.03  # drawn thicker than its 7.6 mm, to be seen
        m.points = [Point(x=x, y=y, z=z) for x, y, z in nodes.tolist()]
        m.text = name
        return m

    def frame(self, q, thrust) -> Frame:
        return self.state.frame(q, thrust)

    def publish(self, stamp, t: float, frame: Frame) -> None:
        out = MarkerArray()
        for k, (origin, arrow, f) in enumerate(
            zip(frame.arrow_origins, frame.arrows, frame.thrust, strict=True)
        ):
            m = self._marker(stamp, "thrust", k, Marker.ARROW, FORWARD if f >= 0 else REVERSE)
            m.points = [_point(origin), _point(origin + arrow)]
            m.scale.x, m.scale.y, m.scale.z = 0.015, 0.03, 0.04  # shaft and head diameters, head length
            m.text = self.thruster_names[k]
            out.markers.append(m)
        surface = self.state.surface_height()
        if frame.surface is not None:
            out.markers.append(self._wave_mesh(stamp, frame.surface))
        elif surface is not None:
            out.markers.append(self._plate(stamp, "water_surface", 0, surface, WATER))
        for k, (name, nodes, tension) in enumerate(frame.tethers):
            out.markers.append(self._tether(stamp, k, name, nodes, tension))
        for m in self.fixed:
            m.header.stamp = stamp
            out.markers.append(m)
        current = self.state.current(t)
        for k, root in enumerate(self.roots):
            m = self._marker(stamp, "current", k, Marker.ARROW, CURRENT)
            start = frame.p[root] + [0.0, 0.0, 0.4]
            m.points = [_point(start), _point(start + current)]
            m.scale.x, m.scale.y, m.scale.z = 0.02, 0.05, 0.06
            out.markers.append(m)
        self.markers.publish(out)
