"""Experiment sweeps: grids of configurations run on Dask into a results store.

    report = cdlab.sweep("grid.yaml")                   # or a dict; see cdlab.experiments.grid
    table = cdlab.results(report.store)                 # traces, one pandas table

Dask is imported only when a sweep runs, so ``import cdlab`` stays light.
"""
from .grid import expand_grid, load_grid
from .runner import run_config, solve_config
from .dask_sweep import SweepReport, local_cluster, sweep

__all__ = ["expand_grid", "load_grid", "run_config", "solve_config", "SweepReport", "local_cluster", "sweep"]
