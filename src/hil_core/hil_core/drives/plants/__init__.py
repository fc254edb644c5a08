"""Mock plants behind the hardware interface of ``hil_sim.mock_hardware.node`` (docs/mock_hardware.md).

One protocol (``protocol.Plant``), the ``<ros2_control>`` block as data (``description``), the
controllers emulated in front of a plant (``controllers``) and the plants themselves:

=============  ==================  ==========================================================
plant          command interface   what it is
=============  ==================  ==========================================================
``mirror``     its own             GenericSystem: state = command (oracle of the scaffolding)
``integrate``  position/velocity/  GenericSystem with calculate_dynamics (oracle)
               acceleration
``servo``      position            the hexapod's slider drives (``hil_core.drives.servo``)
``iiwa``       velocity            KUKA iiwa 14 joints (``hil_core.iiwa.arm_sim``)
``hybrid5``    effort              the 5-axis hybrid robot (``hil_core.hybrid5.dynamics``)
=============  ==================  ==========================================================

Modules are imported when a plant is asked for, so a hexapod mock never loads pinocchio.
"""
from __future__ import annotations

import importlib

# plant name -> module, class (gains are read from the module's GAINS)
PLANTS = {
    'mirror': ('hil_core.drives.plants.generic', 'MirrorPlant'),
    'integrate': ('hil_core.drives.plants.generic', 'IntegratePlant'),
    'servo': ('hil_core.drives.plants.servo_plant', 'ServoPlant'),
    'iiwa': ('hil_core.drives.plants.iiwa_plant', 'IiwaPlant'),
    'hybrid5': ('hil_core.drives.plants.hybrid5_plant', 'Hybrid5Plant'),
}
# GenericSystem's default behaviour when neither the node nor the URDF names a plant
DEFAULT_PLANT = 'mirror'
# the hardware <param> of a <ros2_control> block that names the plant of the mock
PLANT_PARAM = 'mock_plant'


def plant_class(name: str):
    if name not in PLANTS:
        raise ValueError(f'unknown plant {name!r} (known: {", ".join(PLANTS)})')
    module, cls = PLANTS[name]
    return getattr(importlib.import_module(module), cls)


def plant_gains(name: str) -> tuple:
    """The plant's parameters (``protocol.Gain``) without building it."""
    return tuple(getattr(plant_class(name), 'GAINS', ()))


def make_plant(name: str, setup):
    return plant_class(name)(setup)
