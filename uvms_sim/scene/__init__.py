"""The world's geometry, declared once (``scene:`` in a description): the seabed (a plane with
a slope, a heightmap or a mesh) and fixed structures (boxes, cylinders, spheres, meshes).
The acoustic sensors, the markers and the browser view read it; ``raycast.SceneRays`` casts
rays into it."""

from .geometry import MAX_TRIANGLES, GeometryError, Shape, load_mesh
from .raycast import SceneRays
from .scene import ContactLaw, Scene, Structure
from .seabed import HeightmapSeabed, MeshSeabed, PlaneSeabed, Seabed

__all__ = [
    "MAX_TRIANGLES", "ContactLaw", "GeometryError", "HeightmapSeabed", "MeshSeabed", "PlaneSeabed", "Scene",
    "SceneRays", "Seabed", "Shape", "Structure", "load_mesh",
]  # fmt: skip
