"""``cdlab`` command line. Each sub-command lives in ``cdlab/commands/<name>.py``
and defines ``add_parser(subparsers)`` which registers itself and sets
``func(args) -> int`` as its handler."""
from __future__ import annotations

import argparse
import importlib
import pkgutil
import sys

from . import commands


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="cdlab", description="Randomized coordinate methods laboratory")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    for mod in sorted(m.name for m in pkgutil.iter_modules(commands.__path__)):
        importlib.import_module(f"{commands.__name__}.{mod}").add_parser(sub)
    return parser


def main(argv=None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if not getattr(args, "func", None):
        parser.print_help()
        return 0
    try:
        return int(args.func(args) or 0)
    except (ValueError, OSError) as exc:  # bad input, or a file the system refuses (permissions, disk full)
        print(f"cdlab {args.command}: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl-C: what finished is stored (a sweep resumes from it); no traceback
        print(f"cdlab {args.command}: interrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
