"""Sub-commands of the ``cdlab`` CLI, one module each (see cdlab/cli.py)."""
