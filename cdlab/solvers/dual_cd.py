"""Dual coordinate ascent: SDCA / Prox-SDCA and dual RCD (Quartz serial).

SDCA (Shalev-Shwartz & Zhang, Prox-SDCA slides; theory.md §3): pick i, take
the exact coordinate step of ``losses.dual_step`` with q = ‖x_i‖²/(λn), then
α_i += Δ, v += Δ x_i/(λn), w_j = S_{μ/λ}(v_j) on the touched j only, so a step
costs ‖x_i‖₀. With μ > 0 this is Prox-SDCA for the elastic net (the step
maximises the quadratic lower bound of D given by the 1-smoothness of g*).

Dual RCD (Csiba & Richtárik, Algorithm 2; theory.md §4): with serial
probabilities q, θ = min_k q_k λγn/(‖x_k‖² + λγn) and the gradient step
Δ = (θ/q_i)(−φ_i'(x_i·w) − α_i) (``update="gradient"``, the algorithm as printed,
which the face-off experiments run: ``FACEOFF_OPTIONS``); ``update="coordinate"``
takes each coordinate's own s̄_i = λγn/(‖x_i‖² + λγn) in place of θ/q_i
(``gradient_step_scale``): q_i s̄_i ≥ θ for every i, so each step's expected
dual gain is still ≥ θ·gap and the face-off bound holds unchanged; it equals
θ/q_i under importance sampling and is larger under any other. The default,
``update="linesearch"``, searches along the same direction for a step that
gains at least the s̄_i step's gain (``losses.dual_linesearch_step``), so the
same bound holds; on raw data, whose large ‖x_i‖² make s̄_i tiny, it is what
certifies within a few hundred passes. ``update="exact"`` is SDCA's step.
SDCA is its uniform special case with the exact step and shares the kernel.

SDCA's ``shrinking=True`` (losses with a box-constrained dual coordinate, sampling="permutation",
one thread) runs liblinear's shrinking (Hsieh et al. 2008, Algorithm 3; ``cdlab.solvers._shrinking``):
examples whose α_i sits at a bound with the gradient pushing outward leave the epochs' active set until a
checkpoint's margins show them wrong or the set is restored. Off by default: SDCA's theorems, and the bound the
page draws, sample all n examples.
After a checkpoint interval in which the certified gap stalled (fell by less than POLISH_FALL×), a run
with shrinking takes conjugate-residual steps on the active set's free face before the next checkpoint
(``cdlab.solvers._face_cr``), or projected Newton steps on a small active set whose free face is singular
(``cdlab.solvers._box_newton``): no step lowers D, and their reads are counted.
On the hinge and absolute losses (no ℓ1 term, a run with a tol) a checkpoint whose dual has nearly converged
while w(α) lags may report the face primal instead (``cdlab.solvers._face_primal``: w solved on α's free face, a
primal point whose gap with α is certified as w(α)'s; α and the steps are unchanged, its reads counted).

``n_jobs`` > 1 runs PASSCoDe-Wild (Hsieh, Yu & Dhillon 2015, "PASSCoDe:
Parallel ASynchronous Stochastic dual Co-ordinate Descent", ICML, Algorithm 1
with Wild updates): the chunk's draws are cut into n_jobs contiguous blocks,
one per thread, and each thread runs the serial kernel on its block against
the shared α, v and w, with no locks and no atomic adds (numba has no atomic
float add on the CPU, so the Atomic variant is not offered). Updates to v that
race are lost, so v drifts from v(α) = Xᵀα/(λn), as the paper's analysis of
Wild says; α itself stays dual-feasible (each α_i written is a step's result, a
point between the old α_i and −φ'(x_i·w) or SDCA's exact step, inside the
domain). The certificate therefore never trusts the shared v: before every
checkpoint :meth:`DualCDState.resync` recomputes v = v(α) and w = S_{μ/λ}(v)
from α (a parallel Xᵀα), the threads go on from there, and the gap reported is
P(w(α)) − D(α) (or the face primal's). The resync is the method's work: its pass over X is counted in
the nonzeros touched and timed with the steps. Two threads drawing the same example in one chunk (i.i.d.
sampling) may both step it; one write wins, which is again a feasible α.
Runs with n_jobs > 1 depend on thread timing and are not reproducible bit for
bit; n_jobs = 1 is the serial kernel, reproducible from the seed.
"""
from __future__ import annotations

import numpy as np
from numba import njit, prange

from .. import losses as L
from ..sampling import make_sampler
from ..problem import soft_threshold
from ._kernels import (full_rows, parallel_xt_alpha, prefetch, prefetch_ahead, prefetch_row,
                       prefetch_whole_row, row_arrays, row_axpy, row_dot, scalar_soft_threshold, sparse_axpy,
                       sparse_dot, whole_row_steps)
from ._gap_estimate import GapEstimate, estimate_schedules
from ._face_cr import POLISH_FALL, POLISH_SHARE, polish
from ._face_primal import FACE_PRIMAL_LAG, FACE_PRIMAL_LOSSES, FACE_PRIMAL_REACH, face_primal_try
from ._shrinking import ActiveSet, shrinking_flag, shrinking_loss_rule, shrinking_sampling_rule
from ._threads import parallel_section, row_blocks
from .base import ALL_LOSSES, MethodSpec, State, register


@njit(cache=True, nogil=True)
def dual_cd_chunk(indptr, indices, data, y, code, s, lam_n, thresh, row_sq,
                  alpha, v, w, order, step_scale, rule, logit, full_rows, ahead, whole_steps):
    """Run len(order) dual coordinate steps in place; returns nonzeros touched.

    ``rule``: EXACT (``losses.dual_step``), LINESEARCH (``losses.dual_linesearch_step`` with floor
    step_scale[i]) or SCALED (the gradient step scaled by step_scale[i]). ``w`` may be the same array
    as ``v`` when thresh (= μ/λ) is 0. ``logit``: empty, or (the logistic loss's exact step from α = 0) each i's
    last root t = logit b⁺, read through ``losses.cached_logit`` (``logistic_step_at``; ``logit_cache``).
    ``data``: X's values, or the one value they share (``_kernels.row_arrays``); ``full_rows``: ``_kernels.full_rows``;
    ``ahead``: ``_kernels.prefetch_ahead`` (0: no prefetch); ``whole_steps``: ``_kernels.whole_row_steps``, the
    leading steps whose row ahead is prefetched whole (its first lines after them).
    """
    touched = 0
    for k in range(order.shape[0]):
        if ahead > 0 and k + ahead < order.shape[0]:
            later = order[k + ahead]
            if k < whole_steps:
                prefetch_whole_row(indptr, indices, data, later, full_rows is None)
            else:
                prefetch_row(indptr, indices, data, later)
            prefetch(alpha, later)
            prefetch(y, later)
            prefetch(row_sq, later)
        i = order[k]
        start, end = indptr[i], indptr[i + 1]
        if full_rows is None:
            z = sparse_dot(indices, data, start, end, w)
        else:
            z = row_dot(indices, data, start, end, w)
        a = alpha[i]
        if logit.shape[0] > 0 and row_sq[i] > 0.0:
            b = a * y[i]
            bn, _, logit[i] = L.logistic_step_at(b, L.cached_logit(b, logit[i]), y[i] * z, row_sq[i] / lam_n)
            a_new = y[i] * bn
        elif rule == EXACT:
            a_new = L.dual_step(code, a, z, y[i], row_sq[i] / lam_n, s)
        elif rule == LINESEARCH:
            a_new = L.dual_linesearch_step(code, a, z, y[i], row_sq[i] / lam_n, s, step_scale[i])
        else:
            a_new = a + step_scale[i] * (-L.loss_deriv(code, z, y[i], s) - a)
        touched += end - start
        delta = a_new - a
        if delta != 0.0:
            alpha[i] = a_new
            if full_rows is None:
                sparse_axpy(indices, data, start, end, delta / lam_n, v)
            else:
                row_axpy(indices, data, start, end, delta / lam_n, v)
            if thresh > 0.0:
                for p in range(start, end):
                    j = indices[p]
                    w[j] = scalar_soft_threshold(v[j], thresh)
    return touched


UPDATES = ("linesearch", "gradient", "coordinate", "exact")
# The face-off (Csiba & Richtárik 2016) compares Algorithm 1 (primal_cd) with Algorithm 2 as printed: the page,
# ``cdlab faceoff --run`` and ``cdlab reproduce faceoff`` run each side with these options
FACEOFF_OPTIONS = {"primal_cd": {}, "dual_cd": {"update": "gradient"}}
SCALED, EXACT, LINESEARCH = 0, 1, 2  # dual_cd_chunk's step rules
NO_LOGIT = np.zeros(0)  # dual_cd_chunk's ``logit`` where no cache is kept


def logit_cache(problem, rule, n_jobs):
    """``dual_cd_chunk``'s ``logit`` for a run from α = 0: for the logistic loss's exact step on one thread an array
    of n (its entries are read only once a step has set them: at α_i = 0 the step reads no logit), else
    NO_LOGIT (PASSCoDe's threads would write α_i and its logit from different steps). A step that reads the cached
    root instead of log(b/(1 − b)) costs a log less; whole calls to a certified relative gap of 1e-6
    (benchmarks/logit_cache_bench.py, log ÷ cached, with losses.W_START_Q_INSIDE's starts): λ = 1/n mushrooms 1.04,
    phishing 1.02, reuters_moneyfx 1.04, a9a 1.02; rcv1_small λ = 0.01/n 1.03 (the cached root read only where
    b ≤ ½: ``losses.cached_logit``)."""
    if problem.loss == "logistic" and rule == EXACT and n_jobs == 1:
        return np.zeros(problem.n_samples)
    return NO_LOGIT


def check_update(update):
    """Raise ValueError unless ``update`` is one of UPDATES."""
    if update not in UPDATES:
        raise ValueError(f"update must be one of {list(UPDATES)}, got {update!r}")


def gradient_step_scale(problem, q, update):
    """The factor s_i of the gradient step Δ = s_i(−φ_i'(x_i·w) − α_i) for each i under probabilities q:
    θ/q_i with θ = min_k q_k s̄_k (``update="gradient"``, face-off Algorithm 2) or s̄_i (``"coordinate"``, and
    the floor of ``"linesearch"``), where s̄_i = λγn/(‖x_i‖² + λγn) zeroes the quadratic term of the step's
    lower bound on the dual gain."""
    lgn = problem.lam * problem.gamma * problem.n_samples
    own = lgn / (problem.row_norms_sq + lgn)
    return np.min(q * own) / q if update == "gradient" else own


@njit(cache=True, nogil=True, parallel=True)
def passcode_chunk(indptr, indices, data, y, code, s, lam_n, thresh, row_sq,
                   alpha, v, w, order, step_scale, rule, n_blocks, ahead, whole_steps):
    """PASSCoDe-Wild (module docstring): ``dual_cd_chunk`` on n_blocks contiguous
    blocks of ``order`` at once, one per thread, on the shared α, v, w without locks (``whole_steps``: 0 or every
    step). Returns the nonzeros touched, summed over the threads."""
    m = order.shape[0]
    touched = np.zeros(n_blocks, np.int64)
    no_logit = np.zeros(0)  # NO_LOGIT (a global array is read-only in a kernel)
    for b in prange(n_blocks):
        touched[b] = dual_cd_chunk(indptr, indices, data, y, code, s, lam_n, thresh, row_sq, alpha, v, w,
                                   order[m * b // n_blocks:m * (b + 1) // n_blocks], step_scale, rule, no_logit,
                                   None, ahead, whole_steps)
    return touched.sum()


class DualCDState(State):
    """State of a dual coordinate method: α, v = Xᵀα/(λn), w = S_{μ/λ}(v)."""

    def __init__(self, problem, sampling, rng, update="linesearch", shrinking=False, n_jobs=1):
        check_update(update)
        if shrinking_flag({"shrinking": shrinking}) and n_jobs > 1:
            raise ValueError(f"shrinking=True runs on one thread (its active set and epochs are one thread's), "
                             f"got n_jobs={n_jobs}; use shrinking=False for the parallel mode")
        super().__init__(problem, rng)
        n = problem.n_samples
        gamma = problem.gamma
        # isinstance first: ``array == "importance"`` compares elementwise and
        # made custom probabilities crash with "truth value of an array".
        if isinstance(sampling, str) and sampling == "importance" and gamma is None:
            raise ValueError(f"importance sampling (face-off eq. 14) needs a smooth loss, not {problem.loss!r} "
                             "(its weights ‖x_i‖² + λγn use the smoothness γ); use sampling='uniform' "
                             "or pass an array of probabilities")
        self.sampler = make_sampler(sampling, n, problem.row_norms_sq, problem.lam, gamma or 1.0, n, what="examples")
        self.rule = {"exact": EXACT, "linesearch": LINESEARCH}.get(update, SCALED)
        if self.rule == EXACT:
            self.step_scale = np.zeros(1)
        else:
            self.step_scale = gradient_step_scale(problem, self.sampler.probs, update)
        self.alpha = np.zeros(n)
        self.logit = logit_cache(problem, self.rule, n_jobs)
        self.v = np.zeros(problem.n_features)
        self.thresh = problem.l1 / problem.lam
        self.w = self.v if self.thresh == 0 else np.zeros(problem.n_features)
        self.steps_per_pass = self.sampler.steps_per_pass(problem.row_nnz)
        self.n_jobs = n_jobs
        # SDCA with shrinking (cdlab.solvers._shrinking): the active set replaces the sampler's order
        self.active_set = ActiveSet(problem, rng) if shrinking else None
        self.first_interval = None if self.active_set is None else self.active_set.first_interval
        # the last checkpoint's row, whether the polish (``_face_cr.polish``) runs before the next, and the polishes'
        # reads so far
        self.last_row, self.face_due, self.polish_reads = None, False, 0
        # one thread without shrinking, where ``_gap_estimate.estimate_schedules``: under eval_every="auto" with a
        # tol, the checkpoints come when the sampled gap estimate says the certificate is due (``_gap_estimate``),
        # checked after each pass's steps. Never with shrinking: its due epochs end chunks until the next checkpoint,
        # which the estimate's loop of due steps (driver._loop) would never reach
        self.schedulable = self.active_set is None and n_jobs == 1 and estimate_schedules(problem)
        self.estimate = None  # built at the first checkpoint of a run it schedules
        # the face primal (``_face_primal``): for the losses with a kink and no ℓ1 term; the last two checkpoints'
        # D, the gap at the state's own w where a checkpoint asked for it, and the nonzeros the face primals read
        self.kinked = problem.loss in FACE_PRIMAL_LOSSES and self.thresh == 0 and problem.lam > 0
        self.duals, self.own_gap, self.face_reads = [], None, 0

    def advance(self, n_steps):
        p = self.p
        if self.active_set is not None:
            touched = self.active_set.advance(p, self.alpha, self.v, self.w, self.thresh, n_steps)
            self.steps_per_pass = self.active_set.steps_per_pass()
            return touched
        order = self.sampler.draw(self.rng, n_steps)
        args = (*row_arrays(p), p.y, p.loss_code, p.s, p.lam * p.n_samples, self.thresh,
                p.row_norms_sq, self.alpha, self.v, self.w, order, self.step_scale, self.rule)
        if self.n_jobs == 1:
            return dual_cd_chunk(*args, self.logit, full_rows(p), prefetch_ahead(p),
                                 whole_row_steps(p, n_steps, p.n_samples - self.steps))
        with parallel_section(self.n_jobs):
            return passcode_chunk(*args, self.n_jobs, prefetch_ahead(p), whole_row_steps(p, n_steps, 0))

    def steps_run(self, n_steps) -> int:
        """With shrinking, the visits its chunk ran (``_shrinking.ActiveSet.ran``: fewer where the certificate
        is due)."""
        return n_steps if self.active_set is None else self.active_set.ran

    def checkpointed(self, row, tol, margins=None):
        self.duals = [*self.duals[-1:], row["dual"]]
        # the schedules read the gap at the state's own w(α), not at a face primal the row may report
        if self.own_gap is not None:
            row, self.own_gap = {**row, "gap": self.own_gap}, None
        if self.schedulable and self.auto_cadence and tol > 0.0:
            if self.estimate is None:
                self.estimate = GapEstimate(self.p)
            self.checkpoints_when_due = True
            self.estimate.checkpointed(self, row, tol)
        if self.active_set is not None:
            self.active_set.checkpointed(tol, self.auto_cadence, margins)
            last = self.last_row
            self.face_due = last is not None and row["gap"] > last["gap"] / POLISH_FALL
            self.last_row = row

    @property
    def due_steps(self) -> int:
        """The steps the driver runs between estimates: a pass's, or fewer to the pass the estimate aims at."""
        steps = self.steps_per_pass
        if self.estimate is not None:
            steps = min(steps, np.ceil(self.estimate.passes_to_aim(self) * self.steps_per_pass))
        return max(1, int(round(steps)))

    def certificate_due(self, tol) -> bool:
        """Whether the sampled gap estimate says the certificate may be ≤ tol (``_gap_estimate.GapEstimate.due``)."""
        return self.estimate.due(self, tol)

    def resync(self, room=None) -> int:
        """With shrinking, after a stalled interval: the active set's polish (``_face_cr.polish``: CR on its
        free face, or projected Newton), on a budget of POLISH_SHARE× what the interval read, within ``room`` and
        so that all the run's polishes read at most what its steps read. With n_jobs > 1:
        v = v(α) and w = S_{μ/λ}(v) recomputed from α (one pass over X, the module docstring's certified
        point), from which the threads go on. Returns the nonzeros read."""
        read = 0
        if self.face_due:
            self.face_due = False
            interval = self.nnz_touched - self.last_row["nnz_touched"]
            steps = self.steps_reads()
            budget = max(min(POLISH_SHARE * interval, steps - self.polish_reads), 0.0)
            if room is not None:
                budget = min(budget, room)
            read += polish(self.p, self.alpha, self.v, self.active_set.active[:self.active_set.size], budget)
            self.polish_reads += read
        if self.n_jobs == 1:
            return read
        p = self.p
        self.v[:] = 0.0
        with parallel_section(self.n_jobs):
            parallel_xt_alpha(*p.csr_arrays, self.alpha, self.v,
                              row_blocks(p.X.indptr, self.n_jobs))
        self.v /= p.lam * p.n_samples
        if self.thresh > 0:
            self.w[:] = soft_threshold(self.v, self.thresh)
        return read + p.nnz

    def steps_reads(self) -> int:
        """The nonzeros the steps read: all the run's but the polishes' and the face primals'."""
        return self.nnz_touched - self.polish_reads - self.face_reads

    def primal_candidate(self, alpha, v, dual, gap, tol):
        """The face primal w_F at a checkpoint's (α, v = v(α)) (``_face_primal``), or None: for the hinge and
        absolute losses without an ℓ1 term, where the gap is at least FACE_PRIMAL_LAG × tol and the dual's last two
        rises between checkpoints, r₁ then r₂ < r₁, extrapolate to a distance from P* of at most
        FACE_PRIMAL_REACH × tol (r₂ρ/(1 − ρ), ρ = r₂/r₁), within FACE_PRIMAL_SHARE of what the steps read. Its
        reads are counted, the checkpoint's pass for Xw_F's margins with them."""
        self.own_gap = gap
        if not self.kinked or len(self.duals) < 2:
            return None
        rise, last_rise = dual - self.duals[1], self.duals[1] - self.duals[0]
        if gap < FACE_PRIMAL_LAG * tol or not 0.0 <= rise < last_rise \
                or rise * rise / (last_rise - rise) > FACE_PRIMAL_REACH * tol:
            return None
        w, read = face_primal_try(self.p, alpha, v, self.steps_reads(), self.face_reads, self.n_jobs)
        self.face_reads += read
        self.nnz_touched += read
        return w

    def iterate(self):
        """(w, α); with n_jobs > 1 the driver has called :meth:`resync` since the last step."""
        return self.w, self.alpha


def gradient_step_loss_rule(loss, options) -> str:
    """The gradient steps (face-off Algorithm 2's θ/q_i, s̄_i and the line search from s̄_i) use φ' and the
    loss's smoothness γ: a non-smooth loss needs the exact step. The smooth stand-in offered must fit the labels:
    the smoothed hinge for the hinge (±1 labels), the squared loss for the absolute loss (real-valued targets)."""
    update = options.get("update")
    if update == "exact" or update not in UPDATES or loss in L.SMOOTH_LOSSES:
        return ""  # an update that is not one of UPDATES is named by the state's own check
    return (f"the gradient step (update={update!r}) needs a smooth loss, not {loss!r}; "
            f"use update='exact' or loss='{L.NEAREST_SMOOTH[loss]}'")


register(MethodSpec(
    name="sdca", make=DualCDState, fixed={"update": "exact"}, kind="dual", axis="examples",
    source="Shalev-Shwartz & Zhang, SDCA / Prox-SDCA (slides); shrinking: Hsieh et al. 2008, Algorithm 3",
    losses=ALL_LOSSES, supports_l1=True, loss_rule=shrinking_loss_rule, sampling_rule=shrinking_sampling_rule,
    samplings=("uniform", "permutation", "cyclic", "importance", "custom"),
))

register(MethodSpec(
    name="dual_cd", make=DualCDState, kind="dual", axis="examples", withheld=("shrinking",),
    source="Csiba & Richtárik 2016, Algorithm 2 (Quartz serial)",
    losses=ALL_LOSSES, supports_l1=True, loss_rule=gradient_step_loss_rule, renamed={"step": "update"},
    samplings=("uniform", "importance", "custom", "permutation", "cyclic"),
))
