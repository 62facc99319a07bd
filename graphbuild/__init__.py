"""Event graph construction: rows (schema.ROW_DTYPE) -> EventGraph.

Stages: sysroles (syscall roles), the C graph core (core/, native_core:
threads, vertices with the splitting heuristics, typed edges), graph
(storage), builder (the pipeline), summary (`argus graph stats`), storage
(SQLite), stacks (user stacks of vertices).  threads / segments / edges are
the Python reference loop kept as the test oracle.  crafted is a test helper
that writes row arrays from a readable description.  See docs/event-graph.md.
"""
from argus.graphbuild.graph import (  # noqa: F401
    EventGraph, Table,
    START_TRACE, START_THREAD, START_WAKEUP, START_SWITCH_IN, START_PRE_TRACE, START_KIND_NAMES,
    END_BLOCKED, END_EXIT, END_TRACE, END_KIND_NAMES,
    EDGE_PROGRAM_ORDER, EDGE_WAKEUP, EDGE_SPAWN, EDGE_DATA_FLAG, EDGE_TYPE_NAMES,
    START_SPLIT, END_SPLIT, EDGE_MESSAGE, EDGE_TIMER,
    SPLIT_NONE, SPLIT_EVENT_LOOP, SPLIT_PEER_CHANGE, SPLIT_BATCH, SPLIT_NAMES,
)
from argus.graphbuild.builder import build_graph  # noqa: F401
from argus.graphbuild.sysroles import SyscallRoles  # noqa: F401
