"""What the mock drives do with a command on arrival (docs/mock_hardware.md): judged as the stock
controller would (commands.py), refused and counted, or held for its frame (lockstep) or queued
for the frame of arrival (real time), and taken by the emulated controller when its frame runs.
A mixin of ``MockHardwareNode`` (node.py), which owns the state it reads and writes."""
from __future__ import annotations

from hil_sim.mock_hardware import status as drive_status
from hil_sim.mock_hardware.commands import judge, judge_forward, judge_plain


class CommandIntake:
    """The command paths of the mock drives: DDS messages and chain-port arrays alike."""

    def _on_command(self, msg) -> None:
        """A command message (DDS, or a producer in the process that is no chain port)."""
        if self.active:
            self._command(judge, msg, self.robot.spec.trajectory)

    def _on_plain_command(self, plain) -> None:
        """The time base's trajectory from its chain port (hil_nodes.runtime.chain_port): arrays."""
        if self.active:
            self._command(judge_plain, plain)

    def _on_forward_command(self, values) -> None:
        """A forward command's values from the controller node's chain port (space_plant)."""
        if self.active:
            self._command(judge_forward, values)

    def _command(self, judge_with, *command) -> None:
        p = self.p
        if self._watchdog.braking:       # stopped for good until re-activated: a command is not even
            if p.lockstep:               # looked at; in lockstep it only paces the braking frames
                self._step()
            return
        now_ns = self._controller_now()
        stamp, verdict = judge_with(self.controller, *command, now_ns)
        if stamp > 0 and not self.sim_clock:     # on the wall clock: the stamp is its F/T sample's frame
            self._ages.add(now_ns - stamp)
        if verdict.accepted:
            self._watchdog.command_ok()
        else:
            self._refuse(verdict, stamp)
            if p.lockstep and self.robot.spec.trajectory:
                # a stamped command's frame goes on waiting for a valid one (a refused one taking
                # its place made it hold, then the valid one was dropped as a duplicate: a jump);
                # forward commands pair by arrival: a refused one still uses up its frame
                return
        if not p.lockstep:
            # applied in the frame of arrival (after the frames still due before it)
            self._pacing.queue(self.t_ns if self.sim_clock else self.now_ns() // self.frame_ns * self.frame_ns,
                               stamp, verdict.entry)
            self._apply_queued()
            return
        key = self._pacing.frame_of(stamp if self.robot.spec.trajectory else None, self.t_ns)
        if not self._pacing.hold_command(key, verdict.entry, self.t_ns):
            if verdict.accepted:                 # (a refused one is counted as refused only)
                self.stale_commands += 1
                drive_status.tell_stale(self, key)
            return
        self._try_advance()

    def _refuse(self, verdict, stamp: int) -> None:
        self.refused[verdict.layer] += 1
        self.last_refusal = f'{verdict.layer}: {verdict.reason}'
        drive_status.tell_refusal(self, verdict, stamp)
        if verdict.reason == 'size_mismatch':   # the controller is deactivated: the watchdog brakes
            self._watchdog_brake(self._watchdog.trip(f'{self.robot.spec.name} deactivated: {verdict.detail}'))

    def _take(self, entry, stamp_ns: int) -> None:
        """The frame's command becomes the controller's (a refused one, None, changes nothing)."""
        self.started = True
        if entry is None or self._watchdog.braking:
            return
        self.controller.apply(entry, self._rel(stamp_ns), self._rel(self.t_ns), self.plant.states)
        self._last_valid_ns = self.t_ns

    def _apply_queued(self) -> None:
        while (queued := self._pacing.next_queued(self.t_ns)) is not None:
            self._take(*queued)
