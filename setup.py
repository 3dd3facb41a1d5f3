"""ament_python package definition for uvms_sim (also installable with pip on a machine without ROS)."""

from glob import glob

from setuptools import find_packages, setup

package_name = "uvms_sim"

setup(
    name=package_name,
    version="0.1.0",
    packages=find_packages(exclude=["test", "test.*", "benchmarks", "tools"]),
    data_files=[
        ("share/ament_index/resource_index/packages", ["resource/" + package_name]),
        ("share/" + package_name, ["package.xml"]),
        ("share/" + package_name + "/launch", glob("launch/*.launch.py")),
        ("share/" + package_name + "/config", glob("config/*.yaml")),
        ("share/" + package_name + "/config/urdf", glob("config/urdf/*")),
    ],
    install_requires=["setuptools"],
    zip_safe=True,
    maintainer="uvms_sim developers",
    maintainer_email="uvms-sim@example.invalid",
    description="Underwater vehicle and vehicle-manipulator simulator for ROS 2 and ArduSub",
    license="Apache-2.0",
    entry_points={
        "console_scripts": [
            "simulator = uvms_sim.ros.node:main",
            "uvms-sim = uvms_sim.cli:main",
        ],
    },
)
