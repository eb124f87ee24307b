"""SVRG (Johnson & Zhang 2013, "Accelerating stochastic gradient descent using
predictive variance reduction", Procedure SVRG, option I), with just-in-time
sparse updates; also the primal oracle of APPA.

It minimises

    f(w) = (1/n) Σ_i φ_i(x_i·w) + (λ/2)‖w‖² + (κ/2)‖w − c‖²

(κ = 0 and c = 0 for ``method="svrg"``; APPA's inner problem, Frostig et al.
2015 eq. 3, has κ > 0 and centre c). An epoch computes the snapshot gradient
ḡ = (1/n) Σ_i φ'(x_i·w̃) x_i at w̃ = w (one pass), then takes m steps

    w ← w − η [(φ_i'(x_i·w) − φ_i'(x_i·w̃)) x_i + ḡ + λw + κ(w − c)]
      = (1 − ρ) w + b − η δ_i x_i,     ρ = η(λ + κ),  b = −η(ḡ − κc),

and keeps the last iterate. Between two steps that touch feature j, b_j is
constant, so w_j follows the affine recurrence w_j ← (1 − ρ) w_j + b_j and k
missed steps are applied at once when j is next read (``_kernels.catch_up_dot``):
w_j ← (1−ρ)^k w_j + b_j (1 − (1−ρ)^k)/ρ. A step then costs ‖x_i‖₀, not d; the
φ_i'(x_i·w̃) are stored at the snapshot, so x_i·w̃ is never recomputed.

``method="lsvrg"`` is loopless SVRG, L-SVRG (Hofmann et al. 2015; Kovalev, Horváth & Richtárik
2020, "Don't jump through hoops and remove those loops", Algorithm 1): no epochs; the same step, and
after step k, with probability p (``refresh_prob``, default 1/n), the reference point becomes
w̃ ← x^k, the iterate that step k started from, and ḡ is recomputed there (one pass). Its
default step is the theorem's, η = 1/(6 L_max) (Kovalev et al. Thm 5: η ≤ 1/(6L) with L the
smoothness of every f_i; ``cdlab.theory.bound("lsvrg", ...)``). The coins come from a generator
spawned from the run's, as refresh gaps (Geometric(p) steps to the next refresh), so the iterates
depend on the seed only, not on how the driver chunks the steps. ``step_size="linesearch"`` runs
it with the line search below (no theorem covers that either).

Why ``svrg`` (epochs, line search) and not L-SVRG with its theorem's step is the variance-reduced
default a user reaches first: on unnormalised shipped data the theorem's step 1/(6 L_max) is as
slow as Johnson & Zhang's 1/(10 L_max) — 7 of the 10 cases of ``benchmarks/raw_steps.py``
(colon-cancer, w8a, ijcnn1, mushrooms at λ = 0.01/n) are still 1e-5 to 1e2 from the duality gap
1e-6 after 300 passes, where svrg's line search certifies 9 of them — and L-SVRG with the line
search needed 1.2–1.5× svrg's passes there (means over seeds 0–2), and missed ijcnn1 logistic.

Defaults of ``method="svrg"``: epoch length m = 2n, step η = 1/(2(L + λ + κ)) with L from SAG's
line search (``step_rules``; Schmidt, Le Roux & Bach 2017 §4.6; no theorem
covers it, and the factor 1/2 is measured: ``benchmarks/raw_steps.py``);
``step_size="L_max"`` is η = 1/(10 L_max), L_max = max_i ‖x_i‖²/γ + λ + κ, which
meets Johnson & Zhang's Thm 1 condition η < 1/(4 L_max) (APPA's oracle uses it:
its theorem is stated for that step). Work: a snapshot (or a loopless refresh) is one pass (nnz(X) nonzeros
touched, one data pass, no "step"); an inner step touches ‖x_i‖₀ and is 1/n
data pass (Johnson & Zhang count 2 gradients per inner step, m + n per epoch:
our data_passes count the rows read, the same quantity up to that factor 2).

Primal-oracle API (APPA's inner solver, and anyone who needs SVRG outside ``cdlab.solve``)::

    from cdlab.solvers.svrg import SVRGState
    state = SVRGState(problem, "uniform", np.random.default_rng(0), step_size="L_max", epoch_length=None,
                      center=c, kappa=k, w0=w0)
    state.run(n_epochs * state.m)  # n_epochs full epochs (a snapshot + m inner steps each)
    state.w                        # the iterate; state.steps, .nnz_touched, .data_passes: the work
    state.restart(w0, center)      # the next stage, without re-allocating

on P(w) + (κ/2)‖w − center‖². ``problem`` is a ``cdlab.Problem`` with a smooth
loss, l1 = 0 and any λ ≥ 0; ``w0`` (the warm start, default 0) and ``center``
(default 0) are length-d arrays, never modified; ``kappa`` ≥ 0; ``step_size``
"linesearch", "L_max" (1/(10 L_max), κ included) or a number; ``epoch_length`` None means 2n.
"""
from __future__ import annotations

import numpy as np
from numba import njit

from .. import losses as L
from ..sampling import make_sampler
from .._checks import check_int, check_real
from ._kernels import affine_constants, affine_power_tables, catch_up_all, catch_up_dot, loss_grad
from .base import SMOOTH_LOSSES, MethodSpec, State, register
from .step_rules import StepRule, lipschitz_search

# c in η = c/(L + λ + κ): 1/10 for L_max (Johnson & Zhang's Thm 1 needs c < 1/4); 1/2 for the
# line search, the measured choice (module docstring)
SVRG_STEPS = {"linesearch": 0.5, "L_max": 0.1}
# the same constants for method="lsvrg": 1/6 for L_max (Kovalev et al. 2020 Thm 5 needs η ≤ 1/(6L))
LOOPLESS_STEPS = {"linesearch": 0.5, "L_max": 1.0 / 6.0}


@njit(cache=True, nogil=True, error_model="numpy")
def svrg_chunk(indptr, indices, data, y, code, s, w, b, last, t0, a, log_a, rho, eta,
               snap_deriv, order, row_sq, inv_gamma, L_est, search, pk, qk):
    """Up to len(order) SVRG inner steps with just-in-time updates; returns (nonzeros
    touched, steps done, L found), as ``saga.sag_chunk`` (a line search that needs an L
    above ``L_est`` ends the chunk before its step).

    ``last[j]`` is the step at which w_j was last brought up to date; steps are
    numbered t0, t0 + 1, ... inside the current epoch. ``pk``, ``qk``: the chunk's ``affine_power_tables``
    (k up to len(order): every coordinate is brought up to date at each chunk's end).
    """
    touched = 0
    for k in range(order.shape[0]):
        t = t0 + k
        i = order[k]
        start, end = indptr[i], indptr[i + 1]
        z = catch_up_dot(indices, data, start, end, w, b, 1.0, last, t, a, log_a, rho, pk, qk)
        if search:
            L_new = lipschitz_search(code, z, y[i], s, row_sq[i], inv_gamma, L_est)
            if L_new > L_est:
                return touched, k, L_new
        delta = eta * (L.loss_deriv(code, z, y[i], s) - snap_deriv[i])
        for p in range(start, end):
            j = indices[p]
            w[j] = a * w[j] + b[j] - delta * data[p]
            last[j] = t + 1
        touched += end - start
    return touched, order.shape[0], 0.0


class SVRGState(State):
    """State of SVRG on f(w) = P(w) + (κ/2)‖w − c‖² (module docstring)."""

    step_constants = SVRG_STEPS

    def __init__(self, problem, sampling, rng, step_size="linesearch", epoch_length=None, center=None, kappa=0.0, w0=None):
        if problem.l1 > 0:
            raise ValueError("SVRG here handles l1 = 0 only (no proximal step)")
        if problem.gamma is None:
            raise ValueError(f"SVRG needs a smooth loss, not {problem.loss!r}")
        kappa = check_real("kappa", kappa, low=0.0)
        n, d = problem.n_samples, problem.n_features
        if epoch_length is None:
            epoch_length = 2 * n
        epoch_length = check_int("epoch_length", epoch_length)
        self.step_rule = StepRule(problem, step_size, self.step_constants, problem.lam + kappa)
        super().__init__(problem, rng)
        self.kappa = kappa
        self.sampler = make_sampler(sampling, n, what="examples")
        self.epoch_length = epoch_length
        self._set_constants()
        self.w = np.zeros(d)
        self.center = np.zeros(d)
        self.restart(np.zeros(d) if w0 is None else w0, center)
        self.b = np.zeros(d)
        self.snap_grad = np.zeros(d)
        self.snap_deriv = np.zeros(n)
        self.last = np.zeros(d, dtype=np.int64)
        # inner steps in about one pass of work: m steps + n snapshot rows per epoch
        self.steps_per_pass = max(1, int(round(n * self.epoch_length / (self.epoch_length + n))))

    def restart(self, w0, center=None):
        """Warm-start at w0 with a new centre (APPA's next stage): the next step takes a snapshot."""
        d = self.p.n_features
        for name, arr in (("w0", w0), ("center", center)):
            if arr is not None:
                arr = np.asarray(arr, dtype=np.float64)
                if arr.shape != (d,) or not np.all(np.isfinite(arr)):
                    raise ValueError(f"{name} must be a finite array of shape ({d},), got shape {arr.shape}")
        self.w[:] = w0
        self.center[:] = 0.0 if center is None else center
        self.pos = self.epoch_length  # epoch finished: snapshot due

    def _set_constants(self):
        self.eta = self.step_rule.eta
        self.rho = self.eta * (self.p.lam + self.kappa)
        self.a, self.log_a = affine_constants(self.rho)

    def _full_gradient(self, grad, deriv):
        """ḡ and the φ_i' at the current w (every coordinate up to date) into grad and deriv: one pass."""
        p = self.p
        loss_grad(*p.csr_arrays, p.y, p.loss_code, p.s, self.w, grad, deriv)
        self.nnz_touched += p.nnz
        self.data_passes += 1.0

    def _snapshot(self):
        self._full_gradient(self.snap_grad, self.snap_deriv)
        self._new_reference()

    def _new_reference(self):
        """The steps from here on use the snapshot arrays: b anew, steps counted from 0."""
        self._set_b()
        self.last[:] = 0
        self.pos = 0

    def _set_b(self):
        self.b[:] = -self.eta * (self.snap_grad - self.kappa * self.center)

    def run(self, n_steps):
        order = self.sampler.draw(self.rng, n_steps)
        done = 0
        while done < n_steps:
            if self.pos == self.epoch_length:
                self._snapshot()
            size = self.step_rule.steps_left(min(n_steps - done, self.epoch_length - self.pos))
            done += self._kernel(order[done:done + size])
        self.steps += n_steps
        self.data_passes += n_steps / self.p.n_samples

    def _kernel(self, order):
        """Run the steps of ``order`` (or fewer, where the line search ends the call) and bring every
        coordinate up to date; returns the steps done."""
        p, rule = self.p, self.step_rule
        pk, qk = affine_power_tables(self.a, self.log_a, self.rho, order.shape[0])
        nnz, k, L_new = svrg_chunk(*p.csr_arrays, p.y, p.loss_code, p.s, self.w, self.b,
                                   self.last, self.pos, self.a, self.log_a, self.rho, self.eta, self.snap_deriv,
                                   order, p.row_norms_sq, rule.inv_gamma, rule.L, rule.search, pk, qk)
        self.nnz_touched += nnz
        self.pos += k
        catch_up_all(self.w, self.b, self.last, self.pos, pk, qk, self.a, self.log_a, self.rho)
        if rule.search:
            rule.after_chunk(k, L_new)
            self._set_constants()
            self._set_b()
        return k

    def iterate(self):
        return self.w.copy(), None  # a copy: the driver keeps the last finite iterate


def refresh_probability(problem, refresh_prob) -> float:
    """L-SVRG's refresh probability p: ``refresh_prob`` checked to lie in (0, 1], None meaning 1/n."""
    if refresh_prob is None:
        return 1.0 / problem.n_samples
    return check_real("refresh_prob", refresh_prob, low=0.0, high=1.0, low_open=True)


class RefreshCoins:
    """L-SVRG's coins as gaps: ``next_gap()`` is the number of steps up to and including the next
    one whose coin shows a refresh, Geometric(p), drawn from a generator spawned from the run's."""

    def __init__(self, rng, p):
        self.rng = None if rng is None else rng.spawn(1)[0]
        self.p = p

    def next_gap(self) -> int:
        return int(self.rng.geometric(self.p))


class LooplessSVRGState(SVRGState):
    """``method="lsvrg"``: L-SVRG (Kovalev, Horváth & Richtárik 2020, Algorithm 1) on
    f(w) = P(w) + (κ/2)‖w − c‖²: after step k, with probability ``refresh_prob`` (default 1/n),
    w̃ ← x^k (module docstring)."""

    step_constants = LOOPLESS_STEPS

    def __init__(self, problem, sampling, rng, step_size="L_max", refresh_prob=None, center=None, kappa=0.0,
                 w0=None):
        n = problem.n_samples
        p = refresh_probability(problem, refresh_prob)
        self.refresh_prob = p
        self.coins = RefreshCoins(rng, p)
        super().__init__(problem, sampling, rng, step_size, None, center, kappa, w0)  # its epoch_length: unused
        self.next_grad = np.zeros(problem.n_features)
        self.next_deriv = np.zeros(n)
        # a step reads one row, and in expectation p refreshes of n rows: n/(1 + pn) steps a pass
        self.steps_per_pass = max(1, int(round(n / (1.0 + p * n))))

    def restart(self, w0, center=None):
        super().restart(w0, center)
        self.start_due = True  # w̃⁰ = x⁰: the first step needs the full gradient at the start
        self.until_refresh = 0  # steps to the next refresh step, itself included; 0: draw the next gap
        self.next_ready = False  # the full gradient at x^k is in next_grad/next_deriv for refresh step k

    def run(self, n_steps):
        order = self.sampler.draw(self.rng, n_steps)
        done = 0
        while done < n_steps:
            if self.start_due:
                self._snapshot()
                self.start_due = False
            if self.until_refresh == 0:
                self.until_refresh = self.coins.next_gap()
            refresh = self.until_refresh == 1
            if refresh and not self.next_ready:
                self._full_gradient(self.next_grad, self.next_deriv)  # at x^k: w is up to date here
                self.next_ready = True
            size = self.step_rule.steps_left(min(n_steps - done, 1 if refresh else self.until_refresh - 1))
            k = self._kernel(order[done:done + size])
            done += k
            self.until_refresh -= k
            if refresh and k == 1:  # step k ran with the old reference; w̃ ← x^k from the next step on
                self.snap_grad, self.next_grad = self.next_grad, self.snap_grad
                self.snap_deriv, self.next_deriv = self.next_deriv, self.snap_deriv
                self.next_ready = False
                self._new_reference()
        self.steps += n_steps
        self.data_passes += n_steps / self.p.n_samples


register(MethodSpec(
    name="svrg", make=SVRGState, withheld=("center", "kappa", "w0"), kind="primal", axis="examples",
    source="Johnson & Zhang 2013, Procedure SVRG (option I); Frostig et al. 2015, Thm 2.2 (as APPA's oracle)",
    losses=SMOOTH_LOSSES, supports_l1=False, needs_lam=False,
    samplings=("uniform", "permutation"), renamed={"step": "step_size"},
    renamed_values={"step_size": {"auto": "L_max"}},  # the L_max rule's old name
))

register(MethodSpec(
    name="lsvrg", make=LooplessSVRGState, withheld=("center", "kappa", "w0"), kind="primal", axis="examples",
    source="Kovalev, Horváth & Richtárik 2020, L-SVRG (Algorithm 1, Thm 5)",
    losses=SMOOTH_LOSSES, supports_l1=False, needs_lam=False,
    samplings=("uniform", "permutation"),
))
