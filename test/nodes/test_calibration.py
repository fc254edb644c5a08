"""The machine calibration `hil run --realtime` prints (hil_nodes.cli.calibration): the bench's
very loop (one home), its seconds read from a child interpreter, and a failed or stuck child
said as not measured, never as a number."""
import importlib.util
import math
import pathlib
import subprocess
import sys

from hil_nodes.cli import calibration

BENCH = pathlib.Path(__file__).resolve().parents[2] / 'bench'


def test_the_loop_is_the_benchs_loop():
    # bench/ is no package of the suite: its module is loaded from its file
    spec = importlib.util.spec_from_file_location('bench_calibration', BENCH / '_calibration.py')
    bench = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(bench)
    assert bench._LOOP == calibration.LOOP_5M
    assert 'range(5_000_000)' in calibration.LOOP_5M and 's += i * i' in calibration.LOOP_5M


def test_the_seconds_of_the_loop_are_read_from_the_child():
    seconds = calibration.result(calibration.start(), timeout=120.0)
    assert seconds is not None and math.isfinite(seconds) and seconds > 0
    line = calibration.summary_line(seconds)
    assert float(line.split(' s ')[0]) == round(seconds, 3) and 'python_loop_5M' in line
    assert 'as the run started' in line
    assert 'as the run stopped' in calibration.summary_line(seconds, 'stopped')   # calibration_after


def test_a_child_that_fails_or_hangs_is_not_measured():
    failed = subprocess.Popen([sys.executable, '-c', 'raise SystemExit(3)'], stdout=subprocess.PIPE, text=True)
    assert calibration.result(failed) is None
    hung = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'], stdout=subprocess.PIPE, text=True)
    assert calibration.result(hung, timeout=0.5) is None
    assert hung.poll() is not None           # stopped, not left behind
    assert calibration.summary_line(None) == 'not measured'


def test_the_headroom_bench_reads_the_glue_of_the_run_not_of_the_return_home(tmp_path):
    """`hil bench headroom`'s glue figure is each stage's last cycle status sent while RUNNING:
    the run's very last one covers the return home and the idle frames (the planner's plain
    path, no kernel), and once read 0 us of kernel for the planner."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
    from rclpy.serialization import serialize_message
    from std_msgs.msg import String
    from hil_nodes.recorder.bag import CheckpointWriter
    spec = importlib.util.spec_from_file_location('bench_headroom', BENCH / 'headroom.py')
    headroom = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(headroom)
    bag = CheckpointWriter(tmp_path / 'bag')
    bag.add_topic('/hil/mode', 'std_msgs/msg/String')
    bag.add_topic('/diagnostics', 'diagnostic_msgs/msg/DiagnosticArray')

    def cycle(t_s, glue, kernel):
        st = DiagnosticStatus(name='planner: cycle', values=[KeyValue(key='glue_cpu_p50_us', value=str(glue)),
                                                            KeyValue(key='kernel_cpu_p50_us', value=str(kernel))])
        bag.write('/diagnostics', int(t_s * 1e9), serialize_message(DiagnosticArray(status=[st])))

    for t_s, mode in ((0.0, 'HOMING'), (2.0, 'RUNNING'), (10.0, 'RETURNING_HOME'), (10.6, 'IDLE')):
        bag.write('/hil/mode', int(t_s * 1e9), serialize_message(String(data=mode)))
        cycle(t_s + 0.3, {'HOMING': 70, 'RUNNING': 15, 'RETURNING_HOME': 68, 'IDLE': 66}[mode],
              {'HOMING': 0, 'RUNNING': 8, 'RETURNING_HOME': 0, 'IDLE': 0}[mode])
    bag.close()
    assert headroom._glue_while_running(tmp_path / 'bag') == {'planner': (15.0, 8.0)}
