"""Where the suite's data tree is: config/ (parameter files, systems/, scenarios/, rviz/, ...)
and urdf/, laid out as in the source checkout.

A plain `colcon build` installs that tree to ``share/hil_core/`` (src/hil_core/setup.py); the
launch files go to ``share/hil_nodes/launch``. The answer, first match wins:

1. ``$HIL_SUITE_ROOT`` (explicit choice);
2. the source checkout this module runs from (editable install, ``colcon build
   --symlink-install``, ``python -m`` in the tree): code and data then come from one tree, and a
   stale installed copy can never shadow an edited config file;
3. ``share/hil_core`` of the ament index (``AMENT_PREFIX_PATH``: a sourced colcon install).

No ROS import: ament_index_python is used when present, else the index is read directly (it is
only a marker file ``share/ament_index/resource_index/packages/hil_core`` under a prefix).
"""
from __future__ import annotations

import os
import pathlib

PACKAGE = 'hil_core'


class DataNotFound(FileNotFoundError):
    """No data tree: the message says where it was looked for."""


def _is_data_root(path: pathlib.Path) -> bool:
    return (path / 'config' / 'systems').is_dir()


def checkout_root() -> pathlib.Path | None:
    """The source checkout this file is part of (<root>/src/hil_core/hil_core/data_paths.py)."""
    here = pathlib.Path(__file__).resolve()
    root = here.parents[3]
    if here.parents[2].name == 'src' and _is_data_root(root):
        return root
    return None


def ament_share(package: str = PACKAGE) -> pathlib.Path | None:
    """share/<package> of the first prefix in AMENT_PREFIX_PATH that registers the package."""
    try:
        from ament_index_python.packages import PackageNotFoundError, get_package_share_directory
    except ImportError:
        for prefix in filter(None, os.environ.get('AMENT_PREFIX_PATH', '').split(os.pathsep)):
            marker = pathlib.Path(prefix, 'share', 'ament_index', 'resource_index', 'packages', package)
            if marker.is_file():
                return pathlib.Path(prefix, 'share', package)
        return None
    try:
        return pathlib.Path(get_package_share_directory(package))
    except (PackageNotFoundError, LookupError, ValueError, OSError):
        return None   # not installed, or AMENT_PREFIX_PATH unset


def data_root() -> pathlib.Path:
    """The directory holding config/ and urdf/ (see the module docstring for the order)."""
    env = os.environ.get('HIL_SUITE_ROOT')
    if env:
        return pathlib.Path(env).resolve()
    checkout = checkout_root()
    if checkout is not None:
        return checkout
    share = ament_share()
    if share is not None and _is_data_root(share):
        return share
    raise DataNotFound('cannot find the hil_suite data (config/, urdf/): not running from a source '
                       'checkout and no share/hil_core with config/systems in AMENT_PREFIX_PATH '
                       '(source the install space, or set HIL_SUITE_ROOT)')


def config_file(*parts: str) -> pathlib.Path:
    """A file under config/ of the data tree."""
    return data_root().joinpath('config', *parts)


def urdf_file(name: str) -> pathlib.Path:
    """A robot description under urdf/ of the data tree."""
    return data_root() / 'urdf' / name
