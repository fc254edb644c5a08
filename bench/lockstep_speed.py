"""Sim seconds per wall second of the lockstep drive test (`hil run hexafloat_scripted`: mock
hexapod, scripted source, supervisor) in one process vs isolated; the whole Hexafloat graph is
measured by bench/hexafloat_latency.py.

Prints `lockstep_speed.<layout>.sim_per_wall: X ratio` and the frame rate. Measured, never
asserted: the figure depends on the machine and its load.
"""
import os
import subprocess
import sys

DURATION = float(os.environ.get('HIL_BENCH_DURATION', '5'))


def run(layout_args):
    cmd = [sys.executable, '-m', 'hil_nodes.cli.main', 'run', 'hexafloat_scripted', '--lockstep', '--duration', str(DURATION),
           '--quiet', '--domain-id', str(150 + os.getpid() % 50)] + layout_args
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=600)
    summary = dict(line.split(': ', 1) for line in out.stdout.splitlines() if ': ' in line)
    return out.returncode, summary


def main():
    for name, args in (('one_process', []), ('isolated', ['--isolated'])):
        code, s = run(args)
        if code != 0:
            print(f'lockstep_speed.{name}.failed: {code} exit')
            continue
        wall = float(s['wall_time_s'])
        print(f'lockstep_speed.{name}.sim_per_wall: {float(s["sim_per_wall"]):.3f} ratio')
        print(f'lockstep_speed.{name}.frames_per_wall_s: {int(s["frames"]) / wall:.0f} Hz')


if __name__ == '__main__':
    main()
