"""Test scaffolding, never shipped in the argus wheel: trace generators
(crafted.py: rows of hand-written scenarios; kdebug_gen.py: xnu kdebug files)
and the Python reference engine of the graph core (reference/, the oracle).

Tests import it as `support` (pyproject: pytest pythonpath = ["tests"]);
bench/ and tests/fuzz/ scripts put tests/ on sys.path first.  It imports the
product (argus.*); the product never imports it.
"""
