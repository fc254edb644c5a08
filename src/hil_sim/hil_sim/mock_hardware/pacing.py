"""When the mock drives integrate a frame, and with which command (hil_sim.mock_hardware.node):
the pace of each clock mode.

* lockstep: a frame is integrated when its command is in (``hold_command``: a stamped command
  for the frame of its stamp, a forward command for the next frame without one), bounded by
  ``time_scale`` (``paced_out``); before the first command t_0 is published again every
  ``REPUBLISH_PERIOD`` (``republish_due``), and after ``lockstep_timeout`` wall s without a
  frame the frame's command is late (``waited``): the node holds or brakes (``lockstep_late``);
  a poll that finds the node's own process was paused restarts that wait (``polled``);
* real time: a command applies in its frame of arrival (``queue``, ``next_queued``); at pace 1
  the frames the wall clock says are due (``grid_due``), a late backlog above ``MAX_CATCHUP_S``
  skipped and counted; at another pace the steady clock scaled by ``time_scale``
  (``scaled_due``), a backlog above ``MAX_SCALED_BACKLOG`` frames slipping that clock.

**Catching up.** The drives are hardware with a clock of their own: a real drive runs through a
stall of the host's process. The mock shares that process, so after a stall it makes up the
frames it was kept from, in order, each with the command that had arrived by then (where none
had, it holds, and the frame is a late command, counted), and publishes each frame's joint state:
the plant's motion has no gap, as the hardware's would not. Only a backlog longer than
``MAX_CATCHUP_S`` is skipped (the drives hold, the node counts overruns), so a process stopped
for seconds does not burst seconds of frames out. This VM stops even a process that only sleeps
on a 2.5 ms grid for 5-17 ms several times a minute (``time.sleep`` to each grid instant, 30 s:
7-16 wake-ups more than 5 ms late, at most 8-17 ms, with the machine 80 % idle, 2026-11-29):
with a bound of 10 ms (4 frames at 400 Hz) a one-minute run at pace 1 skipped 3-14 frames in
such stalls, and ``hil report`` rightly called its streams incomplete. At another pace than 1
(``--time-scale 2``, the headroom check) simulated time is the drives' own clock, the steady
clock scaled: a backlog of more than ``MAX_SCALED_BACKLOG`` frames slips that clock instead (no
frame of any stream is missing, simulated time just moves on from now), as before; made up
there, the frames of a stall went out before the chain had produced their commands, which the
drives then counted late and refused as ending in the past (x2, 30 s, alternating against the
code before: 65 and 116 late, 36 and 64 refused, against 25 and 43, 5 and 17).

``FramePacing`` is a plain object the node owns: it keeps the commands waiting for their frame
and the wall-clock references of the pace, and answers from what it is handed (frame times and
counts, the node's parameters of the moment: ``time_scale`` changes online); the node accepts
the commands, integrates, brakes and counts.
"""
from __future__ import annotations

import time

from hil_core.supervision.lockstep import OwnPause

REPUBLISH_PERIOD = 0.1      # wall s between re-publications of t_0 before the first command
MAX_CATCHUP_S = 0.025       # real time: the longest backlog made up at once (s; module docstring)
MAX_SCALED_BACKLOG = 4      # at another pace: frames advanced at once before the clock slips
MAX_PENDING = 64            # future-stamped commands kept in lockstep
PAUSE_POLLS = 5             # lockstep: a gap of more poll periods than this can be a pause of the process


class FramePacing:
    """The wall-clock references of the drives' pace (the module docstring)."""

    def __init__(self, frame_ns: int):
        self.frame_ns = frame_ns
        # the frames of MAX_CATCHUP_S (10 at 400 Hz, 25 at the iiwa's 1 kHz), at least one
        self.max_catchup = max(1, -(-int(round(MAX_CATCHUP_S * 1e9)) // frame_ns))
        self._pending: dict[int, object] = {}                 # lockstep: command entries by frame
        self._last_key = -frame_ns                            # lockstep: frame of the last forward command
        self._queued: list[tuple[int, int, object]] = []      # real time: (apply at, stamp, entry)
        self.frame_wall = time.monotonic()   # when the last frame was published
        self._run_wall0 = None               # lockstep: when the paced run started
        self._scaled_wall0 = None            # scaled real time: the wall time of frame _scaled_frames0
        self._scaled_frames0 = 0
        self._own_pause = OwnPause(float('inf'))   # lockstep: this process's own pauses (polled sets the limit)

    def published(self) -> None:
        """A frame was published now."""
        self.frame_wall = time.monotonic()
        self._own_pause.alive(self.frame_wall)

    def drop_commands(self) -> None:
        """Forget every command not taken yet (the watchdog brakes)."""
        self._pending.clear()
        self._queued.clear()

    # --- lockstep --------------------------------------------------------------------------------
    def frame_of(self, stamp_ns: int | None, t_ns: int) -> int:
        """The frame a command is for, the current one being ``t_ns``: its stamp's (0 = now, the
        JTC convention), or for a forward command (``stamp_ns`` None) the next frame without one."""
        if stamp_ns is None:
            return max(t_ns, self._last_key + self.frame_ns)
        return t_ns if stamp_ns == 0 else stamp_ns

    def hold_command(self, key: int, entry, t_ns: int) -> bool:
        """Keep ``entry`` for frame ``key``; False (not kept) for a stale or duplicate one."""
        if key < t_ns or key in self._pending:
            return False
        if len(self._pending) >= MAX_PENDING:
            self._pending.pop(min(self._pending))
        self._pending[key] = entry
        self._last_key = key
        return True

    def has_command(self, t_ns: int) -> bool:
        return t_ns in self._pending

    def take_command(self, t_ns: int):
        """The entry kept for frame ``t_ns`` (``has_command``), taken out."""
        return self._pending.pop(t_ns)

    def paced_out(self, frames: int, time_scale: float) -> bool:
        """True when integrating frame ``frames + 1`` now would put sim time ahead of wall time *
        ``time_scale`` (0: no bound). The first call starts the pace."""
        if self._run_wall0 is None:
            self._run_wall0 = time.monotonic()
        if time_scale <= 0.0:
            return False
        sim_next = (frames + 1) * self.frame_ns * 1e-9
        return sim_next > (time.monotonic() - self._run_wall0) * time_scale

    def republish_due(self, now: float) -> bool:
        """Before the first command: t_0 goes out again (wall time ``now``)."""
        return now - self.frame_wall >= REPUBLISH_PERIOD

    def polled(self, now: float, timeout: float, poll_period: float) -> None:
        """Lockstep: the steady poll (every ``poll_period`` s) ran at ``now``. A poll more than half
        of ``timeout`` after the previous one, and more than ``PAUSE_POLLS`` poll periods, found
        this process paused (``OwnPause``): the frame's wait restarts from now. (A timeout set
        shorter online than the poll's rhythm tells a pause from: a late command, as before.)"""
        self._own_pause.limit = max(0.5 * timeout, PAUSE_POLLS * poll_period)   # timeout changes online
        if self._own_pause.paused(now):
            self.frame_wall = max(self.frame_wall, now)

    @property
    def own_pauses(self) -> int:
        """Polls that found this process paused (lockstep)."""
        return self._own_pause.pauses

    @property
    def longest_own_pause(self) -> float:
        """The longest of them (wall s between two checks), 0 without one."""
        return self._own_pause.longest

    def waited(self, now: float, timeout: float) -> bool:
        """No frame for more than ``timeout`` wall s before ``now``: the frame's command is late."""
        return now - self.frame_wall > timeout

    # --- real time ---------------------------------------------------------------------------------
    def queue(self, arrival_ns: int, stamp_ns: int, entry) -> None:
        """A command that arrived in frame ``arrival_ns``: it applies in that frame."""
        self._queued.append((arrival_ns, stamp_ns, entry))

    def next_queued(self, t_ns: int):
        """(entry, stamp) of the next command to apply by frame ``t_ns`` (a stamp of 0 is ``t_ns``),
        taken out; None when there is none."""
        if not self._queued or self._queued[0][0] > t_ns:
            return None
        _, stamp, entry = self._queued.pop(0)
        return entry, (t_ns if stamp == 0 else stamp)

    def grid_due(self, now_ns: int, t_ns: int) -> tuple[int, int]:
        """At pace 1: (frames to skip, frames to integrate) from frame ``t_ns`` to the wall grid's
        ``now_ns`` (timer callbacks can come late on a loaded machine). A backlog above
        ``max_catchup`` frames is skipped (the drives hold, the node counts overruns) rather than
        burst out."""
        due = (now_ns - t_ns) // self.frame_ns
        if due > self.max_catchup:
            return due - self.max_catchup, self.max_catchup
        return 0, max(due, 0)

    def restart_scaled(self) -> None:
        """A new pace (activation, a new time_scale): the scaled clock starts again."""
        self._scaled_wall0 = None

    def scaled_due(self, frames: int, frame_period: float, time_scale: float) -> tuple[int, int]:
        """At another pace: (frames overrun, frames to integrate) for the steady clock scaled by
        ``time_scale``, ``frames`` integrated so far; an overrun backlog is dropped, not burst out."""
        now = time.monotonic()
        if self._scaled_wall0 is None:
            self._scaled_wall0, self._scaled_frames0 = now - frame_period / time_scale, frames
        due = int((now - self._scaled_wall0) * time_scale / frame_period) - (frames - self._scaled_frames0)
        if due > MAX_SCALED_BACKLOG:
            self._scaled_wall0 += (due - MAX_SCALED_BACKLOG) * frame_period / time_scale
            return due - MAX_SCALED_BACKLOG, MAX_SCALED_BACKLOG
        return 0, max(due, 0)
