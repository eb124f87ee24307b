"""The APPA family: approximate proximal point algorithms (Frostig, Ge, Kakade &
Sidford, ICML 2015, "Un-regularizing"; theory.md §7).

F(w) = (1/n) Σ φ_i(x_i·w) + (λ/2)‖w‖², with λ = 0 allowed (F strongly convex,
e.g. least squares with n > d) or small, is minimised through inner problems

    f_{s,κ}(w) = F(w) + (κ/2)‖w − s‖²                                  eq. (3)

(the paper's proximal weight λ is our ``kappa``; its losses are sums, ours
means, so its choice λ = L R² (Cor. 2.7, 2.11) is our default κ = R²/(γn),
which makes the inner condition number R²/(γ(κ+λ)) at most n: SDCA then
needs O(n log c) steps, about a pass per constant factor).

- ``appa`` (Algorithm 1): x^(t) = P(x^(t−1)) with a primal (c, κ)-oracle,
  c = 2(κ+μ)/μ (Thm 2.4). SDCA is made a primal oracle by starting it from
  the primal-to-dual map (eq. 7), α = −φ'(X s), w = c_s + Xᵀα/((κ+λ)n)
  (two passes, ``warm_start="primal"``, the default), and run for the SDCA
  bound's number of steps (``stage_passes="theory"``, ``sdca_oracle_steps``).
- ``accel_appa`` (Algorithm 2): y^(t) = (x^(t) + ρ^{−1/2} v^(t))/(1 + ρ^{−1/2}),
  x^(t+1) = P(y^(t)), g = κ(y^(t) − x^(t+1)),
  v^(t+1) = (1 − ρ^{−1/2}) v^(t) + ρ^{−1/2}(y^(t) − ζ g), ρ = (μ + 2κ)/μ,
  ζ = 2/μ + 1/κ, κ ≥ 2μ, default κ = 2μ + R²/(γn) (Cor. 2.7). (The text copy
  of the paper reads P(x^(t)); g is the Moreau-envelope gradient at y^(t)
  only if the oracle is centred at y^(t), as in the published algorithm.)
  SDCA inside is warm-started from the previous stage's α (O(d) re-centring,
  ``warm_start="dual"``, default) with one pass per stage.
- ``dual_appa`` (Algorithm 3): a first dual point α^(0), then SDCA on the dual
  of f_{x^(t−1),κ} from the previous α and x^(t) = x̂(α^(t)); one pass per stage
  (Section 5: "we set the stage size equal to the dataset size"; Thm 2.10's
  σ = poly(n, κ) has no explicit constant to size the stage from).

μ in the formulas above is μ_F, the strong convexity of F (option ``mu_F``,
default ``Problem.strong_convexity()``; its old name ``mu`` is accepted for one
release, with a FutureWarning), not the L1 strength μ of ``Problem``.

The first dual point (``dual_start``, for every chain of dual warm starts:
``dual_appa``, and ``appa`` / ``accel_appa`` with ``warm_start="dual"``):

- ``"zero"`` (default): α^(0) = 0, whose primal image is x̂_{0,κ}(0) = 0, so
  the inner SDCA starts at the valid primal–dual pair (w, α) = (0, 0) and its
  first stage is plain SDCA with ridge κ from SDCA's usual start. This is the
  setting of the paper's experiments (Section 5, "Algorithms": "All
  algorithms are initialized at x = 0", with Dual APPA's inner SDCA kept as
  a primal–dual pair, Section 4, "Re-centering overhead"); it reads no data.
  At a tiny κ (κn ≪ ‖x_i‖²) an SDCA step moves w by about the Kaczmarz
  projection whatever the centre, so one-pass stages are then SDCA's passes
  with ridge κ: bounded, but no better than SDCA there.
- ``"gradient"``: Algorithm 3 as printed, α^(0) = ŷ(x^(0)) = −φ'(0) (eq. 7,
  one pass to compute, counted as two like the primal-to-dual start). Its
  primal image Xᵀα^(0)/(κn) is of size ‖∇F(0)‖/κ; for a tiny κ one-pass
  stages (condition number R²/(γκ) ≫ n) cannot bring it back, and Dual APPA
  then diverges (a9a, squared loss, κ = 1e-7, 20 stages: F − F* ≈ 4e4
  against F(0) − F* ≈ 0.28; ``benchmarks/lambda_sweep.py``), where the paper (Section 5, "Parameter sensitivity")
  reports APPA converging for every λ. Both coincide at stage 0 (x^(0) = 0);
  Thm 2.10's guarantee holds from either, given a dual oracle.

SDCA on f_{s,κ} in our mean notation is SDCA with regulariser
((κ+λ)/2)‖w − c_s‖², c_s = κs/(κ+λ), i.e. w = c_s + Xᵀα/((κ+λ)n). Its steps
only add Δ x_i/((κ+λ)n) to w, so ``dual_cd.dual_cd_chunk`` runs it unchanged
on the array w = c_s + v (passed as both v and w, no L1 threshold: the paper
has no L1 term); re-centring to s' (and κ') with the same α is
w ← c_s' + (w − c_s)(κ+λ)/(κ'+λ), O(d): for λ = 0 and fixed κ, Section 4's
w' = 2w − s.

``inner="svrg"`` runs ``svrg.SVRGState`` on P(w) + (κ/2)‖w − s‖² started at
the centre (a primal oracle, Thm 2.2): with ``stage_passes="theory"`` (its
default) epochs of m = ⌈50 L/(μ+κ)⌉ steps at η = 1/(10L), which make Johnson &
Zhang's Theorem 1 factor ≤ 1/2 (that theorem is for their option II; this
SVRG keeps the last iterate), ⌈log₂ c⌉ epochs per stage; with a number,
one epoch of stage_passes·n steps.

``kappa_decay`` < 1 multiplies κ by that factor after every stage, down to
``kappa_min`` (Section 4, "Decreasing λ"; Lemma 2.3 holds stage by stage for
any κ_t > 0; Accelerated APPA's analysis fixes ρ, so it keeps κ fixed).

Trace: a checkpoint at a stage boundary reports the stage output x^(t) (column ``inner`` False);
one inside a stage reports the inner solver's point (``inner`` True), which can be far above
F(0) at a small κ while every x^(t) is within the bound: plots draw the stage rows.

Work: ``steps`` = inner steps (SDCA coordinate steps or SVRG inner steps);
``nnz_touched`` adds their rows, SVRG snapshots (nnz each) and primal-to-dual
starts (2·nnz each); ``data_passes`` counts the same in passes. The O(d)
re-centring reads no data and is not counted.
"""
from __future__ import annotations

import math

import numpy as np

from .. import losses as L
from .._checks import check_real, renamed
from ..sampling import Sampler
from .agd import smooth_constant
from ._kernels import full_rows, prefetch_ahead, whole_row_steps
from .base import SMOOTH_LOSSES, MethodSpec, State, register
from .dual_cd import EXACT, NO_LOGIT, dual_cd_chunk
from .svrg import SVRGState

def strong_convexity(problem, what):
    """μ of F, ``Problem.strong_convexity`` (λ, plus λ_min(XᵀX)/n for least
    squares), the value the theory layer's μ_F reads too, so that a run and its
    bound agree. Raises ValueError (asking for ``mu_F``) when that is not > 0 or too costly."""
    try:
        mu = problem.strong_convexity()
    except ValueError as exc:
        raise ValueError(f"{what} needs the strong convexity μ of F: {exc}; pass mu_F > 0") from None
    if not mu > 0:
        raise ValueError(f"{what} needs the strong convexity μ of F and cannot certify one here "
                         f"(loss={problem.loss!r}, lam={problem.lam:g}, d={problem.n_features}); pass mu_F > 0")
    return mu


def sdca_oracle_steps(problem, kappa, c):
    """SDCA steps that make it a primal (c, κ)-oracle from the start α = ŷ(s).

    SDCA's bound (theory.md §3): T ≥ Q log(Q (D* − D(α₀))/ε) with
    Q = n + R²/(γλ'), λ' = κ + λ, for expected gap ≤ ε. At α₀ = ŷ(s) the gap of
    (s, α₀) is ‖∇f(s)‖²/(2λ') ≤ (L_f/λ')(f(s) − f*), L_f ≤ R²/γ + λ', and the
    oracle needs ε = (f(s) − f*)/c.
    """
    lam1 = kappa + problem.lam
    Q = problem.n_samples + problem.R ** 2 / (problem.gamma * lam1)
    ratio = (problem.R ** 2 / problem.gamma + lam1) / lam1
    return max(1, math.ceil(Q * math.log(Q * ratio * c)))


def svrg_oracle_epochs(problem, kappa, mu, c):
    """(epoch length, epochs) that make SVRG a primal (c, κ)-oracle (module docstring)."""
    L_max = smooth_constant(problem, kappa)
    return max(1, math.ceil(50 * L_max / (mu + kappa))), max(1, math.ceil(math.log2(c)))


class SDCAOracle:
    """SDCA on f_{s,κ}: dual α, primal w = c_s + Xᵀα/((κ+λ)n)."""

    def __init__(self, problem, rng):
        self.p, self.rng = problem, rng
        self.sampler = Sampler(problem.n_samples, "uniform")
        self.center = np.zeros(problem.n_features)
        self.kappa = None
        self._no_scale = np.zeros(1)

    def _c(self, center, kappa):
        return kappa / (kappa + self.p.lam) * center

    def start_zero(self, center, kappa, stage_len):
        """Dual start α = 0 (``dual_start="zero"``): w = c_s, a valid pair reading no data."""
        self.alpha = np.zeros(self.p.n_samples)
        self.w = self._c(center, kappa)
        self.center[:], self.kappa = center, kappa
        return 0

    def start(self, center, kappa, stage_len):
        """Primal-to-dual start (eq. 7): α = −φ'(X s), w = c_s + Xᵀα/((κ+λ)n); returns the nnz read."""
        p = self.p
        self.alpha = L.neg_deriv(p.loss_code, p.X @ center, p.y, p.s)
        self.w = self._c(center, kappa) + (p.X.T @ self.alpha) / ((kappa + p.lam) * p.n_samples)
        self.center[:], self.kappa = center, kappa
        return 2 * p.nnz

    def recenter(self, center, kappa, stage_len):
        """Dual warm start: the same α, a new centre and κ; O(d), reads no data."""
        lam = self.p.lam
        v = self.w - self._c(self.center, self.kappa)
        self.w = self._c(center, kappa) + v * ((self.kappa + lam) / (kappa + lam))
        self.center[:], self.kappa = center, kappa
        return 0

    def run(self, k):
        """k SDCA steps; returns (nonzeros read, data passes)."""
        p = self.p
        order = self.sampler.draw(self.rng, k)
        nnz = dual_cd_chunk(*p.csr_arrays, p.y, p.loss_code, p.s,
                            (self.kappa + p.lam) * p.n_samples, 0.0, p.row_norms_sq,
                            self.alpha, self.w, self.w, order, self._no_scale, EXACT, NO_LOGIT, full_rows(p),
                            prefetch_ahead(p), whole_row_steps(p, k, 0))
        return nnz, k / p.n_samples

    def iterate(self):
        return self.w, self.alpha


class SVRGOracle:
    """SVRG on P(w) + (κ/2)‖w − s‖², started at s."""

    def __init__(self, problem, rng):
        self.p, self.rng = problem, rng
        self.state = None

    def start(self, center, kappa, epoch_length):
        s = self.state
        if s is None or s.kappa != kappa or s.epoch_length != epoch_length:
            self.state = SVRGState(self.p, "uniform", self.rng, step_size="L_max", epoch_length=epoch_length,
                                   center=center, kappa=kappa, w0=center)
        else:
            s.restart(center, center)
        return 0

    recenter = start

    def run(self, k):
        """k inner steps (and the snapshots SVRG takes on the way); returns (nnz, passes)."""
        nnz, passes = self.state.nnz_touched, self.state.data_passes
        self.state.run(k)
        return self.state.nnz_touched - nnz, self.state.data_passes - passes

    def iterate(self):
        return self.state.w.copy(), None


class APPAState(State):
    """Stages of an approximate proximal point method around an inner oracle."""

    def __init__(self, problem, sampling, rng, variant, kappa=None, kappa_decay=1.0, kappa_min=None,
                 inner="sdca", stage_passes=None, warm_start=None, mu_F=None, dual_start=None, mu=None):
        if problem.R == 0:
            raise ValueError("APPA needs at least one nonzero row of X")
        super().__init__(problem, rng)
        n = problem.n_samples
        if inner not in ("sdca", "svrg"):
            raise ValueError(f"inner must be 'sdca' or 'svrg', got {inner!r}")
        if warm_start is None:
            warm_start = "dual" if variant != "appa" and inner == "sdca" else "primal"
        if warm_start not in ("primal", "dual"):
            raise ValueError(f"warm_start must be 'primal' or 'dual', got {warm_start!r}")
        if inner == "svrg" and warm_start == "dual":
            raise ValueError("the SVRG oracle starts at the centre (a primal start); warm_start='dual' "
                             "needs inner='sdca'")
        if dual_start is None:
            dual_start = "zero" if warm_start == "dual" else None
        elif not isinstance(dual_start, str) or dual_start not in ("zero", "gradient"):
            raise ValueError(f"dual_start must be 'zero' (α = 0, w = 0: Section 5's start) or 'gradient' "
                             f"(Algorithm 3's α = ŷ(x^(0))), got {dual_start!r}")
        elif warm_start != "dual":
            raise ValueError(f"dual_start={dual_start!r} chooses the first dual point of a chain of dual warm "
                             "starts; it needs warm_start='dual' (a primal start maps every centre to ŷ(s))")
        self.dual_start = dual_start
        if stage_passes is None:
            stage_passes = "theory" if warm_start == "primal" else 1.0
        if stage_passes != "theory":
            stage_passes = check_real("stage_passes ('theory' or a number of passes)", stage_passes,
                                      low=0.0, low_open=True)
        self.kappa_decay = check_real("kappa_decay", kappa_decay, low=0.0, high=1.0, low_open=True)
        self.variant, self.inner, self.warm, self.stage_passes = variant, inner, warm_start, stage_passes
        mu_F = renamed("mu_F", mu_F, "mu", mu)
        if mu_F is not None:
            self.mu_F = check_real("mu_F", mu_F, low=0.0, low_open=True)
        elif variant == "accel_appa" or stage_passes == "theory":
            self.mu_F = strong_convexity(problem, variant if variant == "accel_appa" else
                                       f"{variant} with stage_passes='theory'")
        else:
            self.mu_F = None
        base_kappa = problem.R ** 2 / (problem.gamma * n)
        if variant == "accel_appa":
            kappa = (2 * self.mu_F + base_kappa if kappa is None
                     else check_real("kappa", kappa, low=0.0, low_open=True))
            if kappa < 2 * self.mu_F:
                raise ValueError(f"accel_appa needs kappa ≥ 2μ = {2 * self.mu_F:g} (Algorithm 2), got {kappa:g}")
            self.rho = (self.mu_F + 2 * kappa) / self.mu_F
            self.zeta = 2 / self.mu_F + 1 / kappa
        else:
            kappa = base_kappa if kappa is None else check_real("kappa", kappa, low=0.0, low_open=True)
        self.kappa = kappa
        if kappa_min is None:
            if self.kappa_decay < 1 and problem.lam == 0:
                raise ValueError("kappa_decay < 1 with lam = 0 needs kappa_min > 0 (κ must stay positive)")
            self.kappa_min = 0.0
        else:
            self.kappa_min = check_real("kappa_min", kappa_min, low=0.0, low_open=True)
        self.oracle = SDCAOracle(problem, rng) if inner == "sdca" else SVRGOracle(problem, rng)
        self.x = np.zeros(problem.n_features)  # x^(0) = 0, the first centre
        self.v = self.x.copy()
        self.stage, self.pos = 0, 0
        # the first stage's start: α^(0) = 0 (Section 5's x = 0) or ŷ(x^(0)) (Algorithm 3 as printed)
        self._begin_stage(self.x, self.oracle.start_zero if dual_start == "zero" else self.oracle.start)

    @property
    def steps_per_pass(self):
        """Inner steps in about one pass of work, a stage's start included.

        SDCA's steps read about nnz/n each; SVRG's count its snapshots (one
        pass per epoch); a primal-to-dual start reads 2·nnz per stage, which
        dominates when stages are short (a stage of one step costs two passes)."""
        inner = self.p.n_samples if self.inner == "sdca" else self.oracle.state.steps_per_pass
        start = 2.0 if (self.inner == "sdca" and self.warm == "primal") else 0.0
        return max(1, int(round(self.stage_len / (self.stage_len / inner + start))))

    def oracle_c(self):
        """The oracle's relative accuracy: 2(κ+μ)/μ (Thm 2.4) or 4ρ^{3/2} (Thm 2.6)."""
        if self.variant == "accel_appa":
            return 4 * self.rho ** 1.5
        return 2 * (self.kappa + self.mu_F) / self.mu_F

    def _begin_stage(self, center, move):
        n = self.p.n_samples
        if self.stage_passes != "theory":
            self.stage_len = epoch = max(1, int(round(self.stage_passes * n)))
        elif self.inner == "sdca":
            self.stage_len = epoch = sdca_oracle_steps(self.p, self.kappa, self.oracle_c())
        else:
            epoch, epochs = svrg_oracle_epochs(self.p, self.kappa, self.mu_F, self.oracle_c())
            self.stage_len = epoch * epochs
        nnz = move(center, self.kappa, epoch)
        self.nnz_touched += nnz
        self.data_passes += nnz / self.p.nnz
        self.pos = 0

    def _end_stage(self):
        """Algorithms 1 and 3 re-centre on the stage's output, Algorithm 2 on y^(t+1)."""
        x_new = np.array(self.oracle.iterate()[0], copy=True)
        if self.variant == "accel_appa":
            r = self.rho ** -0.5
            y = (self.x + r * self.v) / (1 + r)  # y^(t), the centre of the stage just finished
            g = self.kappa * (y - x_new)
            self.v = (1 - r) * self.v + r * (y - self.zeta * g)
            self.x = x_new
            center = (self.x + r * self.v) / (1 + r)  # y^(t+1)
        else:
            self.x = center = x_new
            self.kappa = max(self.kappa * self.kappa_decay, self.kappa_min)
        self.stage += 1
        self._begin_stage(center, self.oracle.start if self.warm == "primal" else self.oracle.recenter)

    def run(self, n_steps):
        done = 0
        while done < n_steps:
            k = min(n_steps - done, self.stage_len - self.pos)
            nnz, passes = self.oracle.run(k)
            self.nnz_touched += nnz
            self.data_passes += passes
            self.pos += k
            done += k
            if self.pos == self.stage_len:
                self._end_stage()
        self.steps += n_steps

    def align_last_chunk(self, n_steps, slack):
        """End the pass budget on the nearest stage boundary when one is within ``slack`` steps.

        Uniform draws read slightly fewer than nnz nonzeros per n steps, so a
        budget of 20 passes falls a few dozen steps into stage 21, where the
        reported point is that stage's start (2x − s), not x^(20)."""
        end = self.pos + n_steps
        below = (end // self.stage_len) * self.stage_len  # pos itself when pos = 0
        above = below + self.stage_len
        nearest = [b for b in (below, above) if b >= self.pos and abs(b - end) <= slack]
        if nearest:
            return min(nearest, key=lambda b: abs(b - end)) - self.pos
        return n_steps

    def at_stage_output(self):
        """True at a stage boundary, where ``iterate`` is the stage output x^(t) (trace column ``inner``
        False); mid-stage it is the inner solver's point, which Lemma 2.3 and Thms 2.6, 2.10 do not bound."""
        return self.pos == 0

    def iterate(self):
        """The method's point: x^(t) at a stage boundary, else the inner solver's current point.

        Algorithms 1–3 output the stages' results x^(t). Right after a boundary
        the oracle already holds the next stage's starting primal point — 2x − s
        after the O(d) re-centring, s − ∇F(s)/κ after a primal-to-dual start,
        Xᵀŷ(0)/(κn) at the very start with ``dual_start="gradient"`` — which is
        not an iterate of the method and, for a small κ, is far worse than
        x^(t): reporting it drew a wrong curve and, as the first row, inflated
        the driver's divergence threshold P(w₀). (A checkpoint a few steps
        past a boundary would still show that start, nearly unchanged: the
        pass budget's end is moved onto a boundary by ``align_last_chunk``.)"""
        w, alpha = self.oracle.iterate()
        if self.pos == 0:
            w = self.x
        return w, alpha


_COMMON = dict(make=APPAState, kind="primal-dual", axis="examples", losses=SMOOTH_LOSSES, supports_l1=False,
               needs_lam=False, samplings=("uniform",))

register(MethodSpec(
    name="appa", fixed={"variant": "appa"},
    source="Frostig, Ge, Kakade & Sidford 2015, Algorithm 1 (APPA), Lemma 2.3, Thm 2.4",
    **_COMMON))

register(MethodSpec(
    name="accel_appa", fixed={"variant": "accel_appa"}, withheld=("kappa_decay", "kappa_min"),
    source="Frostig, Ge, Kakade & Sidford 2015, Algorithm 2 (Accelerated APPA), Thm 2.6",
    **_COMMON))

register(MethodSpec(
    name="dual_appa", fixed={"variant": "dual_appa"}, withheld=("inner", "warm_start", "mu"),
    source="Frostig, Ge, Kakade & Sidford 2015, Algorithm 3 (Dual APPA), Thm 2.10, Section 4",
    **_COMMON))
