# For static tools only (Python imports no .pyi): the package root that CMake
# generates from cli/argus_init.py.in, whose names it declares.  Being a
# stub package, argus/ outranks an installed argus for pyright, so argus.X
# resolves through the links beside this file even under an editable install.
__version__: str
NATIVE_DIR: str
