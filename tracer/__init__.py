"""Trace access from Python: schema, reader (decoder bindings), producer."""
