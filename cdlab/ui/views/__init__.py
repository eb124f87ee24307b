"""Thin views of an :class:`cdlab.ui.state.Experiment`: each reads the state's
parameters and draws; the figures and tables they show come from pure
functions (``*_plot``, ``*_table``) that the headless tests call directly."""
from .banner import Banner
from .controls import Controls
from .convergence import ConvergenceView
from .data_view import DataView
from .faceoff import FaceoffCard
from .figure1 import Figure1View
from .parallel_cost import ParallelCostView
from .results import ResultsView
from .theory_card import TheoryCard

__all__ = ["Banner", "Controls", "ConvergenceView", "DataView", "FaceoffCard", "Figure1View", "ParallelCostView", "ResultsView", "TheoryCard"]
