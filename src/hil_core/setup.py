import os

from setuptools import setup


def data_tree(source: str, destination: str, skip=('.py', '.pyc')) -> list[tuple[str, list[str]]]:
    """data_files entries installing the directory ``source`` (relative to this file, a symlink
    into the repository's data tree) under ``destination``, sub-directories included. Paths stay
    relative: colcon refuses absolute data_files and symlinks them one by one with
    --symlink-install."""
    here = os.path.dirname(os.path.abspath(__file__))
    entries = []
    for dirpath, dirnames, filenames in os.walk(os.path.join(here, source)):
        dirnames[:] = sorted(d for d in dirnames if d != '__pycache__')
        rel = os.path.relpath(dirpath, here)
        files = [os.path.join(rel, f) for f in sorted(filenames) if not f.endswith(skip)]
        if files:
            entries.append((os.path.normpath(os.path.join(destination, os.path.relpath(dirpath, os.path.join(here, source)))),
                            files))
    return entries


package_name = 'hil_core'
# The data tree (config/, urdf/ of the repository, linked into this package) is installed to
# share/hil_core: hil_core.data_paths finds it there through the ament index.

setup(
    data_files=[('share/ament_index/resource_index/packages', ['resource/' + package_name]),
                ('share/' + package_name, ['package.xml'])]
    + data_tree('config', 'share/' + package_name + '/config', skip=())
    + data_tree('urdf', 'share/' + package_name + '/urdf', skip=('.py', '.pyc')),
)
