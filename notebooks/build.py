"""Build the teaching notebooks (``notebooks/*.ipynb``) from their sources in
``notebooks/src/*.py``, without outputs.

The sources use the "percent" format (as jupytext and VS Code read it):

    # %% [markdown]          a markdown cell; its lines are comments ("# text")
    # %% tags=["parameters"] a code cell tagged "parameters" (the test suite
                             overrides it, papermill-style)
    # %%                     a code cell

Edit a source, then run ``python notebooks/build.py``; the test suite checks
that every committed notebook is what its source builds.
"""
from __future__ import annotations

import json
import re
import sys
from pathlib import Path

import nbformat

HERE = Path(__file__).resolve().parent
SRC = HERE / "src"
_HEADER = re.compile(r"^# %%(?P<md> \[markdown\])?(?: tags=(?P<tags>\[.*\]))?\s*$")


def _strip(lines):
    while lines and not lines[0].strip():
        lines.pop(0)
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _markdown(lines):
    out = []
    for line in lines:
        if line.strip() and not line.startswith("#"):
            raise ValueError(f"markdown cell line does not start with '#': {line!r}")
        out.append(line[2:] if line.startswith("# ") else line[1:])
    return "\n".join(out)


def cells_of(text: str):
    """The (kind, source, tags) of each cell of a percent-format source."""
    cells, current = [], None
    for line in text.splitlines():
        match = _HEADER.match(line)
        if match:
            if current is not None:
                cells.append(current)
            tags = json.loads(match["tags"]) if match["tags"] else []
            current = ("markdown" if match["md"] else "code", [], tags)
        elif current is None:
            if line.strip():
                raise ValueError(f"text before the first '# %%' cell marker: {line!r}")
        else:
            current[1].append(line)
    if current is not None:
        cells.append(current)
    out = []
    for kind, lines, tags in cells:
        lines = _strip(lines)
        source = _markdown(lines) if kind == "markdown" else "\n".join(lines)
        out.append((kind, source, tags))
    return out


def build(source: Path) -> nbformat.NotebookNode:
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    nb.metadata["language_info"] = {"name": "python"}
    for index, (kind, text, tags) in enumerate(cells_of(source.read_text())):
        cell = nbformat.v4.new_markdown_cell(text) if kind == "markdown" else nbformat.v4.new_code_cell(text)
        cell["id"] = f"{source.stem[:2]}-{index:03d}"  # stable ids: a rebuild changes nothing it need not
        if tags:
            cell.metadata["tags"] = tags
        nb.cells.append(cell)
    nbformat.validate(nb)
    return nb


def dumps(nb) -> str:
    return nbformat.writes(nb) + "\n"


def main(argv=None):
    check = "--check" in (argv or sys.argv[1:])
    stale = []
    for source in sorted(SRC.glob("*.py")):
        target = HERE / f"{source.stem}.ipynb"
        text = dumps(build(source))
        if check:
            if not target.exists() or target.read_text() != text:
                stale.append(target.name)
        else:
            target.write_text(text)
            print(f"wrote {target.relative_to(HERE.parent)}")
    if stale:
        sys.exit(f"out of date with notebooks/src (run python notebooks/build.py): {', '.join(stale)}")


if __name__ == "__main__":
    main()
