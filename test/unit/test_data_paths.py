"""The data tree (config/, urdf/) is found from a checkout and from a colcon install space."""
import pathlib

from hil_core import data_paths


def _fake_install(prefix: pathlib.Path) -> pathlib.Path:
    """What `colcon build` installs for hil_core: the ament index marker and share/hil_core."""
    (prefix / 'share' / 'ament_index' / 'resource_index' / 'packages').mkdir(parents=True)
    (prefix / 'share' / 'ament_index' / 'resource_index' / 'packages' / 'hil_core').write_text('')
    (prefix / 'share' / 'hil_core' / 'config' / 'systems').mkdir(parents=True)
    return prefix / 'share' / 'hil_core'


def _module_at(monkeypatch, path: pathlib.Path) -> None:
    """Make data_paths believe it was imported from ``path`` (a checkout or an install space)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('')
    monkeypatch.setattr(data_paths, '__file__', str(path))


def test_checkout_code_uses_the_checkout_even_with_an_install_sourced(tmp_path, monkeypatch):
    share = _fake_install(tmp_path / 'install')
    checkout = tmp_path / 'hil_suite'
    (checkout / 'config' / 'systems').mkdir(parents=True)
    _module_at(monkeypatch, checkout / 'src' / 'hil_core' / 'hil_core' / 'data_paths.py')
    monkeypatch.delenv('HIL_SUITE_ROOT', raising=False)
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path / 'install'))
    assert data_paths.ament_share() == share                  # the index is read...
    assert data_paths.checkout_root() == checkout
    assert data_paths.data_root() == checkout                 # ...but code and data come from one tree


def test_installed_code_finds_share_hil_core_through_the_ament_index(tmp_path, monkeypatch):
    share = _fake_install(tmp_path / 'install')
    _module_at(monkeypatch, tmp_path / 'install' / 'lib' / 'python3.11' / 'site-packages' / 'hil_core' / 'data_paths.py')
    monkeypatch.delenv('HIL_SUITE_ROOT', raising=False)
    monkeypatch.setenv('AMENT_PREFIX_PATH', f'{tmp_path / "other"}:{tmp_path / "install"}')
    assert data_paths.checkout_root() is None
    assert data_paths.data_root() == share
    assert data_paths.config_file('systems') == share / 'config' / 'systems'
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path / 'other'))
    try:
        data_paths.data_root()
    except data_paths.DataNotFound as exc:
        assert 'HIL_SUITE_ROOT' in str(exc)
    else:
        raise AssertionError('no data tree must be an error')


def test_the_index_is_read_without_ament_index_python_too(tmp_path, monkeypatch):
    import builtins
    share = _fake_install(tmp_path / 'install')
    real_import = builtins.__import__

    def no_ament(name, *args, **kwargs):
        if name.startswith('ament_index_python'):
            raise ImportError(name)
        return real_import(name, *args, **kwargs)
    monkeypatch.setattr(builtins, '__import__', no_ament)
    monkeypatch.setenv('AMENT_PREFIX_PATH', str(tmp_path / 'install'))
    assert data_paths.ament_share() == share
    monkeypatch.delenv('AMENT_PREFIX_PATH')
    assert data_paths.ament_share() is None


def test_hil_suite_root_wins(tmp_path, monkeypatch):
    monkeypatch.setenv('HIL_SUITE_ROOT', str(tmp_path))
    assert data_paths.data_root() == tmp_path.resolve()
