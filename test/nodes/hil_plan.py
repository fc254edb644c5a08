"""`hil plan` for tests, two ways: through the command's own parser in the test process (fast),
and as a process of its own, as a user runs it (~3 s of imports here)."""
import contextlib
import io
import subprocess
import sys


def hil_plan(*args: str) -> tuple[int, str, str]:
    """`hil plan ARGS` in this process: (exit code, stdout, stderr). The same function the process
    runs, without its start-up; cli.main's signal handlers are the process's, not a plan's."""
    from hil_nodes.cli import main as cli
    out, err = io.StringIO(), io.StringIO()
    parsed = cli.build_parser().parse_args(['plan', *args])
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            code = int(parsed.func(parsed) or 0)
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else 1
    return code, out.getvalue(), err.getvalue()


def hil_plan_process(*args: str) -> tuple[int, str, str]:
    """`hil plan ARGS` as a process of its own: (exit code, stdout, stderr)."""
    proc = subprocess.run([sys.executable, '-m', 'hil_nodes.cli.main', 'plan', *args], capture_output=True,
                          text=True, timeout=120)
    return proc.returncode, proc.stdout, proc.stderr
