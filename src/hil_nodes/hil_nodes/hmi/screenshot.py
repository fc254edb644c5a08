"""The live HMI of a running system as a PNG (the screenshots in docs/hmi.md and the README):

    python -m hil_nodes.hmi.screenshot space-iiwa docs/hmi_space_iiwa.png [--domain-id N] [hil run options]

Starts ``hil run <system> --hmi --hmi-port 0`` (lockstep unless the options say otherwise), opens
the page the run prints in headless Chromium (hil_nodes.hmi.headless), waits until the page shows
the HIL mode RUNNING and the 3D canvas has drawn for ``--settle`` s, saves the screenshot and
stops the run (SIGINT, as Ctrl-C). Exit 1 with the page's text when RUNNING never shows."""
from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

from hil_nodes.cli.processes import interrupt
from hil_nodes.hmi.headless import HeadlessPage


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog='python -m hil_nodes.hmi.screenshot', description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('system')
    parser.add_argument('out', help='PNG file to write')
    parser.add_argument('--domain-id', type=int, default=int(os.environ.get('ROS_DOMAIN_ID', '0')))
    parser.add_argument('--settle', type=float, default=8.0, help='wall s of RUNNING before the screenshot')
    parser.add_argument('--timeout', type=float, default=180.0, help='wall s to wait for RUNNING on the page')
    parser.add_argument('--width', type=int, default=1280)
    parser.add_argument('--height', type=int, default=800)
    args, run_args = parser.parse_known_args(argv)
    env = dict(os.environ, ROS_DOMAIN_ID=str(args.domain_id), PYTHONUNBUFFERED='1')
    env.setdefault('ROS_AUTOMATIC_DISCOVERY_RANGE', 'LOCALHOST')
    run = subprocess.Popen([sys.executable, '-m', 'hil_nodes.cli.main', 'run', args.system, '--hmi', '--hmi-port', '0',
                            '--domain-id', str(args.domain_id), '--quiet', *run_args],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        first = run.stdout.readline().strip()
        if not first.startswith('hmi: http'):
            print(f'screenshot: the run did not start its HMI: {first}', file=sys.stderr)
            return 1
        with HeadlessPage(args.width, args.height) as page:
            page.open(first.split(' ', 1)[1])
            try:
                page.wait_for(lambda text: 'Mode: RUNNING' in text and page.canvas_ready(), args.timeout,
                              'the mode RUNNING and the 3D view')
            except TimeoutError as exc:
                print(f'screenshot: {exc}', file=sys.stderr)
                return 1
            time.sleep(args.settle)
            # the browser's "software WebGL" notice covers the view: closed, as an operator would
            page.evaluate('document.querySelectorAll(".mantine-Notification-closeButton").forEach(b => b.click())')
            time.sleep(0.5)
            png = page.screenshot()
        with open(args.out, 'wb') as fh:
            fh.write(png)
        print(f'screenshot: {args.out} ({len(png)} bytes)')
        return 0
    finally:
        interrupt(run)


if __name__ == '__main__':
    sys.exit(main())
