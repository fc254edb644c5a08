"""rclpy's logger finds its caller through ``inspect``, whose first lookup in a process reads the
file of every loaded module (hil_nodes.runtime.caller_lookup): after ``warm()`` every loaded
module is mapped, so the run's first log call has nothing left to read."""
import importlib
import inspect
import sys

from hil_nodes.runtime import caller_lookup


def _unmapped() -> list[str]:
    """The loaded modules ``inspect.getmodule`` would still have to read on its next call."""
    return [name for name, module in sys.modules.copy().items()
            if inspect.ismodule(module) and getattr(module, '__file__', None)
            and inspect._filesbymodname.get(name) != module.__file__]


def test_warm_maps_every_loaded_module_and_the_ones_imported_after_it(tmp_path, monkeypatch):
    caller_lookup.warm()
    assert _unmapped() == []
    # a module imported later (as configure does): a file of its own, never imported before
    name = f'hil_caller_lookup_probe_{tmp_path.name}'.replace('-', '_')
    (tmp_path / f'{name}.py').write_text('VALUE = 1\n')
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        importlib.import_module(name)
        assert name in _unmapped()
        caller_lookup.warm()
        assert _unmapped() == []
    finally:
        sys.modules.pop(name, None)
