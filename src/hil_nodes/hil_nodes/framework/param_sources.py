"""Where a node's parameter values come from, and whether each has the declared type.

rcl merges the ``--params-file`` files and ``-p name:=value`` arguments before a node sees
them, and it does so lossily: a value whose type differs from the one an earlier file gave is
dropped without a word (a double after an int), and rclpy's ``declare_parameter`` raises on a
final value of the wrong type (an int where a double is declared) while the node is being
built, i.e. a traceback instead of a refused configuration. So the node reads its sources
itself, in order, typing each value exactly as rcl's YAML parser does (quoted: string;
true/yes/on...: bool; a whole ``strtol`` number: integer; a whole ``strtod`` number: double;
else string), and reports every value of the wrong type, wherever it is, as one line naming
the node, the parameter, the expected type, the value and the file. The final overrides that
rclpy holds are checked too (they also carry ``parameter_overrides=`` given in code), and a
wrong one is taken out before declaring, so the node is built and refuses at configure.
"""
from __future__ import annotations

import math
import re
import sys
from typing import Any, Iterable

import yaml
from rclpy.parameter import Parameter

TYPE_NAMES = {bool: 'bool', int: 'integer', float: 'double', str: 'string', 'float[]': 'double array',
              'int[]': 'integer array', 'str[]': 'string array', 'bool[]': 'bool array'}
_RCL_TYPE = {Parameter.Type.BOOL: bool, Parameter.Type.INTEGER: int, Parameter.Type.DOUBLE: float,
             Parameter.Type.STRING: str, Parameter.Type.DOUBLE_ARRAY: 'float[]',
             Parameter.Type.INTEGER_ARRAY: 'int[]', Parameter.Type.STRING_ARRAY: 'str[]',
             Parameter.Type.BOOL_ARRAY: 'bool[]', Parameter.Type.BYTE_ARRAY: 'byte[]'}
_TRUE = {'true', 'True', 'TRUE', 'yes', 'Yes', 'YES', 'on', 'On', 'ON'}
_FALSE = {'false', 'False', 'FALSE', 'no', 'No', 'NO', 'off', 'Off', 'OFF'}
_SPECIAL_FLOATS = {'.nan': math.nan, '.NaN': math.nan, '.NAN': math.nan, '.inf': math.inf, '.Inf': math.inf,
                   '.INF': math.inf, '-.inf': -math.inf, '-.Inf': -math.inf, '-.INF': -math.inf}
_INT = re.compile(r'[+-]?(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)')
_FLOAT = re.compile(r'[+-]?((\d+\.?\d*|\.\d+)([eE][+-]?\d+)?|inf(inity)?|nan)', re.IGNORECASE)


def rcl_scalar(node: yaml.ScalarNode) -> Any:
    """A YAML scalar typed as rcl_yaml_param_parser types it."""
    text = node.value
    if node.style in ("'", '"'):
        return text
    if text in _TRUE:
        return True
    if text in _FALSE:
        return False
    if _INT.fullmatch(text):
        return int(text, 16) if text.lstrip('+-')[:2] in ('0x', '0X') else int(text, 8 if re.fullmatch(
            r'[+-]?0[0-7]+', text) else 10)
    if text in _SPECIAL_FLOATS:
        return _SPECIAL_FLOATS[text]
    if _FLOAT.fullmatch(text):
        return float(text)
    return text


def _value(node: yaml.Node) -> Any:
    if isinstance(node, yaml.SequenceNode):
        return [_value(n) for n in node.value]
    if isinstance(node, yaml.MappingNode):
        return {k.value: _value(v) for k, v in node.value}
    return rcl_scalar(node)


def _flatten(prefix: str, body: dict) -> Iterable[tuple[str, Any]]:
    for key, value in body.items():
        name = f'{prefix}{key}'
        if isinstance(value, dict):
            yield from _flatten(name + '.', value)
        else:
            yield name, value


def _node_pattern(key: str) -> re.Pattern:
    parts = [p for p in key.strip().split('/') if p]
    regex = ''.join('(?:/[^/]+)*' if p == '**' else '/[^/]+' if p == '*' else '/' + re.escape(p) for p in parts)
    return re.compile(regex or '/')


def file_values(path: str, fqn: str) -> list[tuple[str, Any]]:
    """(parameter, value) of the node with fully qualified name ``fqn`` in a params file, in
    file order (wildcard sections included)."""
    with open(path) as fh:
        root = yaml.compose(fh)
    out: list[tuple[str, Any]] = []
    if not isinstance(root, yaml.MappingNode):
        return out
    for key, body in root.value:
        if not _node_pattern(str(key.value)).fullmatch(fqn):
            continue
        body = _value(body)
        params = body.get('ros__parameters') if isinstance(body, dict) else None
        if isinstance(params, dict):
            out.extend(_flatten('', params))
    return out


def ros_arg_sources(argv: list[str], fqn: str) -> list[tuple[str, str, Any]]:
    """(source, parameter, value) from the ``--ros-args`` part of ``argv``, in order."""
    out: list[tuple[str, str, Any]] = []
    inside, i = False, 0
    while i < len(argv):
        arg = argv[i]
        if arg == '--ros-args':
            inside = True
        elif arg == '--':
            inside = False
        elif inside and arg == '--params-file' and i + 1 < len(argv):
            path = argv[i + 1]
            try:
                out.extend((path, name, value) for name, value in file_values(path, fqn))
            except (OSError, yaml.YAMLError):
                pass    # rcl reports an unreadable file itself, before any node exists
            i += 1
        elif inside and arg in ('-p', '--param') and i + 1 < len(argv):
            name, sep, text = argv[i + 1].partition(':=')
            if sep:
                try:
                    out.append((f'-p {argv[i + 1]}', name, _value(yaml.compose(text or "''"))))
                except yaml.YAMLError:
                    pass
            i += 1
        i += 1
    return out


def _describe(value: Any) -> str:
    kind = value_type(value)
    name = TYPE_NAMES.get(kind, kind or 'value')
    return f'{name} {value!r}'


def value_type(value: Any) -> Any:
    """The Param type a value has (bool, int, float, str, 'float[]'...), or a text for a
    mixed or empty list."""
    if isinstance(value, list):
        kinds = {value_type(v) for v in value}
        if not kinds:
            return 'empty array'
        if len(kinds) > 1:
            return 'mixed array'
        kind = kinds.pop()
        return {bool: 'bool[]', int: 'int[]', float: 'float[]', str: 'str[]'}.get(kind, 'nested array')
    if isinstance(value, bool):
        return bool
    if isinstance(value, int):
        return int
    if isinstance(value, float):
        return float
    if isinstance(value, str):
        return str
    return type(value).__name__


def type_problem(expected: Any, value: Any) -> str | None:
    """'expects a double, got integer 3' or None if the value has the expected type."""
    kind = value_type(value)
    if kind == expected or (kind == 'empty array' and isinstance(expected, str)):
        return None
    return f'expects {_a(TYPE_NAMES[expected])}, got {_describe(value)}'


def _a(name: str) -> str:
    return ('an ' if name[0] in 'aeiou' else 'a ') + name


def check_sources(node, table: dict, argv: list[str] | None = None) -> list[tuple[str, str]]:
    """(parameter, problem in one line) for the types of ``node``'s parameter values, and the
    ranges of its scalar ones, for the parameters in ``table`` (name -> Param). Wrong final
    overrides are removed from the node, so declaring the parameters (with their native rcl
    ranges) no longer raises; the caller refuses configuration."""
    node_name = node.get_name()
    fqn = node.get_fully_qualified_name()
    problems: list[tuple[str, str]] = []
    named = set()
    for source, name, value in ros_arg_sources(sys.argv if argv is None else argv, fqn):
        spec = table.get(name)
        problem = None if spec is None else type_problem(spec.type, value)
        if problem:
            named.add(name)
            problems.append((name, f"node {node_name}: parameter '{name}' {problem} (in {source})"))
    overrides = node._parameter_overrides
    for name, spec in table.items():
        given = overrides.get(name)
        if given is None or given.type_ == Parameter.Type.NOT_SET:
            continue
        outside = spec.out_of_range(given.value) if _RCL_TYPE.get(given.type_) == spec.type else None
        if outside:                            # rcl's native range would raise at declare
            del overrides[name]
            problems.append((name, f'node {node_name}: {outside}'))
            continue
        if _RCL_TYPE.get(given.type_) != spec.type:
            del overrides[name]
            if name not in named:
                value = given.value
                if not isinstance(value, (str, bytes)) and hasattr(value, '__len__'):
                    value = list(value)
                problem = type_problem(spec.type, value) or f'expects {_a(TYPE_NAMES[spec.type])}'
                problems.append((name, f"node {node_name}: parameter '{name}' {problem}"))
    return problems


def unknown_parameters(node) -> list[str]:
    """Override names the node never declared (a typo, or a value meant for another node)."""
    declared = set(node._parameters)
    return sorted(n for n in node._parameter_overrides
                  if n not in declared and not n.startswith('qos_overrides.'))
