"""A minimal managed node for supervisor tests: a HilLifecycleNode that records its
transitions and can be told to refuse configuration. Runnable by path as a subprocess
(`python test/nodes/dummy_managed.py --ros-args -r __node:=name`) or imported in-process."""
from __future__ import annotations

from typing import Callable

from hil_nodes.framework.base import HilLifecycleNode, Param, ParameterError
from hil_nodes.runtime.runner import main_for


class DummyManaged(HilLifecycleNode):
    PARAMS = (
        Param('refuse_configure', bool, False, 'fail on_configure (tests the supervisor\'s FAULT path)'),
        Param('raise_on_activate', bool, False, 'raise in on_activate: the node goes to ErrorProcessing'),
    )

    def __init__(self, node_name: str = 'dummy_managed', journal: Callable[[str, str], None] | None = None,
                 **kwargs):
        self._journal = journal or (lambda node, transition: None)
        super().__init__(node_name, **kwargs)

    def configure_node(self) -> None:
        if self.p.refuse_configure:
            raise ParameterError("parameter 'refuse_configure' is true: configuration refused on purpose")
        self._journal(self.get_name(), 'configure')

    def activate_node(self) -> None:
        if self.p.raise_on_activate:
            raise RuntimeError('activation blew up on purpose')
        self._journal(self.get_name(), 'activate')

    def deactivate_node(self) -> None:
        self._journal(self.get_name(), 'deactivate')

    def cleanup_node(self) -> None:
        self._journal(self.get_name(), 'cleanup')


main = main_for(DummyManaged)

if __name__ == '__main__':
    main()
