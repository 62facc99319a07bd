"""`argus instrument LIB -o OUT`: a statically instrumented copy of a library.

Writes OUT, a copy of the shared library LIB (ELF .so or Mach-O dylib,
x86_64 or arm64) whose hooked functions (the hook spec, the same data as
`argus run`) branch into trampolines stored in the file itself, entries and
(x86_64) returns.  An ELF copy records through libargus-static.so into the
rings of the running daemon, found as `argus run` finds them
($ARGUS_RUN_DIR/urings, default /run/argus/urings; nothing to set for the
default daemon; when they cannot be used, one stderr line of the program
says why); load it in place of the original (LD_LIBRARY_PATH).  A dylib copy loads libargus-static.dylib from its own
directory (@loader_path; on arm64 re-sign both with codesign -f -s -).
OUT gets LIB's permission bits (set-id bits dropped).
"""
import sys

from argus.hooks import hookspec, static_rewrite
from argus.cli.common import ArgusError


def register(sub):
    p = sub.add_parser("instrument", help="write a statically instrumented copy of a shared library",
                       description=__doc__.split("\n\n")[1])
    p.add_argument("library", metavar="LIB", help="ELF shared library or Mach-O dylib")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="instrumented copy to write")
    p.add_argument("--hooks", action="append", metavar="FILE",
                   help="hook spec file (JSON; repeatable); default: the installed spec")
    p.set_defaults(func=run_instrument)


def run_instrument(args):
    hooks = hookspec.load(args.hooks)

    def warn(msg):
        print(f"argus instrument: {msg}", file=sys.stderr)

    try:
        n = static_rewrite.instrument(args.library, args.output, hooks, warn)
    except OSError as e:
        raise ArgusError(f"cannot write {args.output}: {e.strerror}")
    print(f"{args.output}: {n} hook{'s' if n != 1 else ''} placed")
    return 0
