"""hil_nodes.msgs.status_bytes: a node's status written as CDR bytes is the DiagnosticArray that
``convert.status_array`` builds: rclpy's ``deserialize_message`` reads it back as that message,
and it has the message's true length (``serialize_trimmed``: rclpy's bytes, whose padding
rmw_fastrtps does not clear, cut to the message's end), for any names, texts, levels and values
(hypothesis): empty strings, every length modulo 4, non-ASCII text, no values."""
from __future__ import annotations

from builtin_interfaces.msg import Time
from diagnostic_msgs.msg import DiagnosticArray
from hypothesis import given, settings, strategies as st
from rclpy.serialization import deserialize_message

from hil_nodes.msgs.cdr_encode import serialize_trimmed
from hil_nodes.msgs.convert import status_array
from hil_nodes.msgs.status_bytes import status_array_bytes

TEXT = st.text(alphabet=st.characters(min_codepoint=1, max_codepoint=0x2FF), max_size=11)
VALUES = st.dictionaries(TEXT, st.one_of(st.integers(-2**40, 2**40), st.floats(allow_nan=True), TEXT,
                                         st.booleans(), st.lists(st.floats(-1e9, 1e9), max_size=3)), max_size=6)


@settings(max_examples=300, deadline=None)
@given(sec=st.integers(-2**31, 2**31 - 1), nanosec=st.integers(0, 999_999_999), level=st.integers(0, 3),
       name=TEXT, message=TEXT, hardware_id=TEXT, values=VALUES, as_byte=st.booleans())
def test_the_bytes_are_the_status_array(sec, nanosec, level, name, message, hardware_id, values, as_byte):
    msg = status_array(Time(sec=sec, nanosec=nanosec), level, name, message, hardware_id, values)
    got = status_array_bytes(sec, nanosec, bytes([level]) if as_byte else level, name, message, hardware_id,
                             values)
    assert len(got) == len(serialize_trimmed(msg))
    assert deserialize_message(got, DiagnosticArray) == msg
