"""`hil bench`: the machine calibration is printed before and after the benchmarks it goes with,
only `name: value unit` lines pass, and a failing script makes the command fail (with its name)."""
import argparse

from hil_nodes.cli import bench_cmd


def _bench_tree(tmp_path, scripts: dict[str, str]):
    bench = tmp_path / 'bench'
    bench.mkdir()
    for name, body in scripts.items():
        (bench / f'{name}.py').write_text(body)
    return tmp_path


def _run(monkeypatch, root, names):
    monkeypatch.setattr(bench_cmd, 'repo_root', lambda: root)
    return bench_cmd.run(argparse.Namespace(names=names, list=False))


def test_calibration_comes_before_and_after_the_figures(tmp_path, monkeypatch, capsys):
    root = _bench_tree(tmp_path, {
        '_calibration': "print('calibration.python_loop_5M: 0.400 s')\n",
        'fast': "print('fast.step_p50: 3.2 us')\nprint('a line that is no figure')\n",
    })
    assert _run(monkeypatch, root, ['fast']) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == ['# calibration', 'calibration.python_loop_5M: 0.400 s', '# fast', 'fast.step_p50: 3.2 us',
                     '# calibration (after)', 'calibration.python_loop_5M: 0.400 s']


def test_a_failing_benchmark_fails_the_command(tmp_path, monkeypatch, capsys):
    root = _bench_tree(tmp_path, {
        '_calibration': "print('calibration.python_loop_5M: 0.400 s')\n",
        'broken': "print('broken.first: 1 us')\nraise SystemExit(3)\n",
    })
    assert _run(monkeypatch, root, ['broken']) == 1
    out = capsys.readouterr().out
    assert 'broken.first: 1 us' in out and 'broken.failed: 1 (exit 3)' in out


def test_calibration_is_not_listed_as_a_benchmark(tmp_path, monkeypatch):
    root = _bench_tree(tmp_path, {'_calibration': '', 'fast': ''})
    monkeypatch.setattr(bench_cmd, 'repo_root', lambda: root)
    assert list(bench_cmd.available()) == ['fast']
