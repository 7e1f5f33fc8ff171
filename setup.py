"""Package discovery for amqpspec.

The catalog folders (conformance/, scenarios/, fuzz/, reports/) live at the top of the
repository where people look for them, but install inside the ``amqpspec`` namespace so
that no generic top-level name such as ``fuzz`` lands in site-packages. The mapping is
computed from the tree instead of being listed by hand, so new sub-packages need no edit.
"""
from pathlib import Path

from setuptools import setup

ROOT = Path(__file__).parent
# top-level folder -> import name inside the amqpspec namespace
MOUNTS = {
    "amqpspec": "amqpspec",
    "conformance": "amqpspec.conformance",
    "scenarios": "amqpspec.scenarios",
    "fuzz": "amqpspec.fuzz",
    "reports": "amqpspec.reports",
}


def discover() -> tuple[list[str], dict[str, str]]:
    packages: list[str] = []
    package_dir: dict[str, str] = {}
    for folder, name in MOUNTS.items():
        for init in sorted((ROOT / folder).rglob("__init__.py")):
            rel = init.parent.relative_to(ROOT)
            dotted = ".".join((name, *rel.parts[1:]))
            packages.append(dotted)
            package_dir[dotted] = rel.as_posix()
    return packages, package_dir


packages, package_dir = discover()
setup(packages=packages, package_dir=package_dir)
