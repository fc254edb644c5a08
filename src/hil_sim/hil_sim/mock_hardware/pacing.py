"""When the mock drives integrate a frame (hil_sim.mock_hardware.node): the clock-mode half of the node.

* lockstep: a frame is integrated when its command is in (``_try_advance``), bounded by
  ``time_scale``; a timer (``_poll``) re-publishes t_0 before the first command and, after
  ``lockstep_timeout`` wall s without one, counts the frame late and holds or brakes
  (``lockstep_late``);
* real time at pace 1: the frames the wall clock says are due (``_realtime_tick``), a late
  backlog above ``MAX_CATCHUP`` frames skipped and counted; at another pace the steady clock
  scaled by ``time_scale`` (``_scaled_tick``).

A mixin of ``MockHardwareNode``: it uses the node's state (frames, pending and queued commands,
controller, watchdog) and its ``_step`` / ``_take`` / ``_apply_queued``.
"""
from __future__ import annotations

import time

REPUBLISH_PERIOD = 0.1      # wall s between re-publications of t_0 before the first command
MAX_CATCHUP = 4             # real time: most frames advanced in one late timer callback


class FramePacing:
    def _paced_out(self) -> bool:
        """True when advancing now would put sim time ahead of wall time * time_scale."""
        if self.p.time_scale <= 0.0 or self._run_wall0 is None:
            return False
        sim_next = (self.frames + 1) * self.frame_ns * 1e-9
        return sim_next > (time.monotonic() - self._run_wall0) * self.p.time_scale

    def _try_advance(self) -> None:
        while self.active and self.t_ns in self._pending:
            if self._run_wall0 is None:
                self._run_wall0 = time.monotonic()
            if self._paced_out():
                return
            self._take(self._pending.pop(self.t_ns), self.t_ns)
            self._step()

    def _poll(self) -> None:
        now = time.monotonic()
        if not self.started and self.t_ns not in self._pending:
            if now - self._frame_wall >= REPUBLISH_PERIOD:
                self._publish_frame()
            return
        self._watchdog_brake(self._watchdog.check(commands_watched=False))
        if self._watchdog.braking:             # braking on its own: no command is waited for
            self._step()
            return
        self._try_advance()
        if self.t_ns in self._pending:         # waiting for pacing only
            return
        if now - self._frame_wall > self.p.lockstep_timeout:
            self.late_commands += 1
            self._late_since_status += 1
            reason = f'no command for frame {self._rel(self.t_ns):.4f} s within lockstep_timeout ' \
                     f'({self.p.lockstep_timeout:g} s)'
            if not (self.p.lockstep_late == 'brake' and self._watchdog_brake(self._watchdog.trip(reason))):
                self.controller.hold(self._rel(self.t_ns))
            self._step()

    def _realtime_tick(self) -> None:
        """Integrate the frames that wall time says are due (timer callbacks can come late on a
        loaded machine). A backlog above MAX_CATCHUP frames is skipped (the drives hold, the
        frames are counted as overruns) rather than burst out."""
        if not self.active:
            return
        self._watchdog_brake(self._watchdog.check(commands_watched=self.started))
        if self.sim_clock:
            return self._scaled_tick()
        due = (self.now_ns() - self.t_ns) // self.frame_ns
        if due > MAX_CATCHUP:
            skip = due - MAX_CATCHUP
            self.overruns += skip
            self._cycle.skipped(skip)
            self._apply_queued()
            self.controller.frames_skipped(self._rel(self.t_ns), self._rel(self.t_ns + skip * self.frame_ns))
            self.k += skip
            due = MAX_CATCHUP
        for _ in range(max(due, 0)):
            self._apply_queued()
            self._step()
        self._apply_queued()

    def _scaled_tick(self) -> None:
        """Real time at a pace other than 1 (time_scale): frames follow the steady clock."""
        now = time.monotonic()
        if self._rt_wall0 is None:
            self._rt_wall0, self._rt_frames0 = now - self.p.frame_period / self.p.time_scale, self.frames
        due = int((now - self._rt_wall0) * self.p.time_scale / self.p.frame_period) - (self.frames - self._rt_frames0)
        if due > MAX_CATCHUP:
            self.overruns += due - MAX_CATCHUP
            self._rt_wall0 += (due - MAX_CATCHUP) * self.p.frame_period / self.p.time_scale
            due = MAX_CATCHUP
        for _ in range(max(due, 0)):
            self._apply_queued()
            self._step()
