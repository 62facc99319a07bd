"""Debugger backends: each imports its debugger's own module (only lldb so far)."""
