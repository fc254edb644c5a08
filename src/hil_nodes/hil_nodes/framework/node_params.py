"""A node's Param table on the ROS side (the parameter half of ``HilLifecycleNode``).

* declared from the table with their descriptors (description, range and choices written out,
  read-only flags), after the types in every source were checked
  (hil_nodes.framework.param_sources): a wrong type refuses configure with one line instead of
  declare_parameter's traceback;
* validated as a whole in ``load_parameters`` (the values, then the node's
  ``check_parameters``): a bad or missing value names the parameter;
* changed online through ``_on_set_parameters``: refused while active unless the parameter is
  ``dynamic``, accepted while inactive; the node applies what changed in ``apply_parameters``
  (the base's own dynamic ones, ``_BASE_DYNAMIC``, in ``_apply_base_dynamic``).

A mixin of a rclpy ``Node`` subclass that sets ``configured`` and ``active``; it owns
``_param_table``, ``_type_problems`` and ``p``.
"""
from __future__ import annotations

import sys
from types import SimpleNamespace
from typing import Any, Iterable

from rcl_interfaces.msg import SetParametersResult
from rclpy.exceptions import ParameterUninitializedException
from rclpy.parameter import Parameter

from hil_nodes.framework.param_sources import check_sources
from hil_nodes.framework.param_table import _PARAM_TYPES, REQUIRED, Param, ParameterError


class TableParameters:
    # parameters the base applies itself (never passed to a subclass's apply_parameters)
    _BASE_DYNAMIC: frozenset[str] = frozenset()

    def _declare_table(self, params: Iterable[Param], cli_args=None) -> None:
        self._param_table = {p.name: p for p in params}
        # wrong-typed values are found (and wrong overrides taken out) before declaring:
        # declare_parameter would raise on them, i.e. a traceback instead of a refusal
        self._type_problems: dict[str, list[str]] = {}
        argv = [*sys.argv, *(cli_args or ())]          # the process's and the node's own
        for name, problem in check_sources(self, self._param_table, argv):
            self._type_problems.setdefault(name, []).append(problem)
        for p in self._param_table.values():
            descriptor = p.descriptor()
            ptype = _PARAM_TYPES[p.type]
            if p.default is REQUIRED:
                self.declare_parameter(p.name, ptype, descriptor)
            elif isinstance(p.type, str) and len(p.default) == 0:
                # rclpy would type an empty list as a byte array: declare the array type, then the
                # empty default unless the parameter files gave a value.
                self.declare_parameter(p.name, ptype, descriptor)
                if self._raw_value(p.name) is None:
                    self.set_parameters([Parameter(p.name, ptype, [])])
            else:
                self.declare_parameter(p.name, p.default, descriptor)
        self.p = SimpleNamespace()           # the validated values: load_parameters at configure
        self.add_on_set_parameters_callback(self._on_set_parameters)

    def _raw_value(self, name: str) -> Any:
        try:
            return self.get_parameter(name).value
        except ParameterUninitializedException:
            return None

    def _declared_or_default(self, name: str) -> Any:
        try:
            return self._param_table[name].validate(self._raw_value(name))
        except ParameterError:
            return self._param_table[name].default

    def load_parameters(self) -> SimpleNamespace:
        """Validate every declared parameter; raise ParameterError naming the first bad one
        (wrong types in any source first, all of them in one line)."""
        if self._type_problems:
            raise ParameterError('; '.join(m for ms in self._type_problems.values() for m in ms))
        values = {}
        for name, p in self._param_table.items():
            values[name] = p.validate(self._raw_value(name))
        problem = self.check_parameters(SimpleNamespace(**values))
        if problem:
            raise ParameterError(problem)
        return SimpleNamespace(**values)

    def check_parameters(self, p: SimpleNamespace) -> str | None:
        """Cross-parameter checks of a subclass; return an error text naming the parameters."""
        return None

    def apply_parameters(self, changed: set[str]) -> None:
        """Called after accepted online changes (``self.p`` already updated)."""

    def _apply_base_dynamic(self, changed: set[str]) -> None:
        """The base's own dynamic parameters among ``changed`` (``self.p`` already updated)."""

    def _on_set_parameters(self, params: list[Parameter]) -> SetParametersResult:
        if not self.configured:
            for prm in params:            # a new value (rclpy checked its type) replaces a wrong one
                self._type_problems.pop(prm.name, None)
            return SetParametersResult(successful=True)
        candidate = dict(vars(self.p))
        for prm in params:
            spec = self._param_table.get(prm.name)
            if spec is None:
                continue
            if self.active and not spec.dynamic:
                return SetParametersResult(
                    successful=False,
                    reason=f"parameter '{prm.name}' can only change while the node is inactive")
            try:
                candidate[prm.name] = spec.validate(prm.value)
            except ParameterError as exc:
                return SetParametersResult(successful=False, reason=str(exc))
        problem = self.check_parameters(SimpleNamespace(**candidate))
        if problem:
            return SetParametersResult(successful=False, reason=problem)
        changed = {prm.name for prm in params if prm.name in self._param_table}
        self.p = SimpleNamespace(**candidate)
        self._apply_base_dynamic(changed & self._BASE_DYNAMIC)
        if changed - self._BASE_DYNAMIC:
            self.apply_parameters(changed - self._BASE_DYNAMIC)
        return SetParametersResult(successful=True)
