"""What stands in the way of the chosen runs, in the page's words, with the fixes a click applies.

A :class:`Notice` is a message naming what to change and the fixes that change it: each fix is a
label and the Experiment settings it sets. The banner at the top of the page shows them.
"""
from __future__ import annotations

import functools
from dataclasses import dataclass, field

from ..losses import LOSSES, NEAREST_SMOOTH, SMOOTH_LOSSES
from ..solvers import METHODS
from .runner import BOTH

LOSS_NAMES = {name: info.label for name, info in LOSSES.items()}


@dataclass(frozen=True)
class Fix:
    label: str
    updates: dict = field(default_factory=dict)


@dataclass(frozen=True)
class Notice:
    message: str
    fixes: tuple = ()


@functools.lru_cache(maxsize=None)
def refuses_loss(method: str, loss: str) -> bool:
    """Whether the method, with the options the page runs it with (its defaults), refuses the loss: its
    spec says so (MethodSpec.loss_refusal: its loss set, and an option-dependent rule such as dual_cd's
    gradient step needing a smooth loss, which its exact step, not offered on the page, would not)."""
    return method in METHODS and bool(METHODS[method].loss_refusal(loss))


def loss_reason(method: str, loss: str) -> str:
    """Why a method cannot take a loss ('' if it can)."""
    if not refuses_loss(method, loss):
        return ""
    taken = [x for x in LOSSES if not refuses_loss(method, x)]
    takes = ", ".join(LOSS_NAMES[x] for x in taken)
    if not set(taken) <= SMOOTH_LOSSES:  # newton: the hinge too, by smoothing (``_hinge_newton``)
        return f"{method} does not take the {LOSS_NAMES.get(loss, loss)} loss: it takes {takes}"
    return (f"{method} needs a smooth loss (its step uses the gradient's Lipschitz constant): it takes {takes}, "
            f"not {LOSS_NAMES.get(loss, loss)}")


def loss_notice(methods, samplings, loss) -> Notice | None:
    """The chosen methods that refuse the loss, and two ways out: a nearby loss they take, or methods
    that take this loss (SDCA first: it handles every loss exactly)."""
    refusing = [m for m in methods if refuses_loss(m, loss)]
    if not refusing:
        return None
    names = " and ".join(refusing) if len(refusing) <= 2 else ", ".join(refusing[:-1]) + " and " + refusing[-1]
    verb = "does" if len(refusing) == 1 else "do"
    message = (f"**{names} {verb} not take the {LOSS_NAMES.get(loss, loss)} loss**: "
               f"{'its' if len(refusing) == 1 else 'their'} steps need a smooth loss. ")
    fixes = []
    nearest = NEAREST_SMOOTH.get(loss)
    if nearest is not None:
        message += f"Switch to the {LOSS_NAMES[nearest]} loss, or run methods that take {LOSS_NAMES[loss]}."
        fixes.append(Fix(f"Use the {LOSS_NAMES[nearest]} loss", {"loss": nearest}))
    kept = [m for m in methods if m not in refusing]
    replacement = [m for m in ("sdca", "dual_cd") if m in METHODS and not refuses_loss(m, loss) and m not in kept]
    if replacement:
        chosen = [m for m in METHODS if m in set(kept) | {replacement[0]}]
        new_samplings = {m: samplings.get(m, "uniform") for m in kept}
        new_samplings[replacement[0]] = "uniform"
        fixes.append(Fix(f"Replace {names} with {replacement[0]}", {"methods": chosen, "samplings": new_samplings}))
    return Notice(message, tuple(fixes))


def notices(state) -> list[Notice]:
    """Everything the banner should say for the state's current settings and outputs."""
    found = []
    if state.error:
        found.append(Notice(f"**Not run:** {state.error}"))
    conflict = loss_notice(state.methods, state.samplings, state.loss)
    if conflict is not None:
        found.append(conflict)
    refused = {label: msg for label, msg in state.run_message.items()
               if state.run_status.get(label) == "refused"
               and not (conflict and any(label.startswith(m + " ") for m in state.methods
                                         if refuses_loss(m, state.loss)))}
    for label, msg in refused.items():
        found.append(Notice(f"**{label} was not run:** {msg}"))
    if not state.methods and not state.error:
        found.append(Notice("**No method chosen:** tick at least one method under *Methods*.",
                            (Fix("Run primal_cd and dual_cd", {"methods": ["dual_cd", "primal_cd"],
                                                              "samplings": {"dual_cd": BOTH, "primal_cd": BOTH}}),)))
    return found
