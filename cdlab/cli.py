"""``cdlab`` command line. Each sub-command lives in ``cdlab/commands/<name>.py``
and defines ``add_parser(subparsers)`` which registers itself and sets
``func(args) -> int`` as its handler.

Every failure is one line on stderr, ``cdlab COMMAND: error: ...``, never a
traceback, and the exit status says which kind it was:

    0   done
    1   a run or configuration failed (a reference optimum not certified,
        failed sweep configurations, a failure inside the library)
    2   bad input: arguments, options, data or grid files
    3   the run diverged (``cdlab solve``)
    130 interrupted (Ctrl-C)
"""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from . import commands

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT, EXIT_DIVERGED, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cdlab", description="Randomized coordinate methods laboratory",
                                     epilog="exit status: 0 done, 1 a run failed, 2 bad input, 3 diverged, "
                                            "130 interrupted")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in sorted(m.name for m in pkgutil.iter_modules(commands.__path__)):
        importlib.import_module(f"{commands.__name__}.{mod}").add_parser(sub)
    return parser


def _one_line(exc) -> str:
    return " ".join(str(exc).split()) or type(exc).__name__


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return EXIT_OK
    prefix = f"cdlab {args.command}: error:"
    try:
        return int(args.func(args) or 0)
    except (ValueError, TypeError, OSError) as exc:  # bad input, or a file the system refuses
        print(f"{prefix} {_one_line(exc)}", file=sys.stderr)
        return EXIT_BAD_INPUT
    except KeyboardInterrupt:  # Ctrl-C: what finished is stored (a sweep resumes from it); no traceback
        print(f"cdlab {args.command}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except MemoryError as exc:
        print(f"{prefix} out of memory{': ' + _one_line(exc) if str(exc) else ''}", file=sys.stderr)
        return EXIT_FAILED
    except Exception as exc:  # a failure of the computation (e.g. an uncertified reference), not of the input
        print(f"{prefix} {type(exc).__name__}: {_one_line(exc)}", file=sys.stderr)
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
