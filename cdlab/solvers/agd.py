"""Full-gradient baselines: accelerated gradient ("agd") and gradient descent ("gd").

Both treat P(w) = f(w) + Ψ(w) as a composite problem (Nesterov 2013,
"Gradient methods for minimizing composite functions", Math. Program. 140):
the smooth part f(w) = (1/n) Σ_i φ_i(x_i·w) and the simple part
Ψ(w) = (λ/2)‖w‖² + μ‖w‖₁, which is λ-strongly convex. Its gradient mapping
has a closed form:

    T_L(y) = argmin_x ⟨∇f(y), x⟩ + (L/2)‖x − y‖² + Ψ(x) = S_μ(L y − ∇f(y)) / (L + λ)

so the elastic net is handled exactly by the prox, never by a subgradient.

* ``gd``: Nesterov 2013 §3, the primal gradient method x⁺ = T_L(x) with
  backtracking (L ← 2L until f(T) ≤ f(x) + ⟨∇f(x), T − x⟩ + (L/2)‖T − x‖²,
  then L ← L/2 for the next iteration) (``step_size="linesearch"``), or a fixed
  ``step_size`` 1/L.
* ``agd``: Nesterov 2013 §4, the accelerated method (4.9) with μ = λ the
  strong convexity of Ψ, γ_u = γ_d = 2: find a from a²/(A + a) = 2(1 + λA)/L,
  y = (A x + a v)/(A + a), T = T_L(y), L ← 2L until
  ⟨P'(T), y − T⟩ ≥ ‖P'(T)‖²/L with P'(T) = L(y − T) + ∇f(T) − ∇f(y);
  then x = T, A += a, v = argmin ψ = S_{Aμ}(x₀ − Σ a_k ∇f(x_k)) / (1 + Aλ).
  It converges linearly at rate ~sqrt(λ/L_f) and as O(1/k²) when λ = 0.

Work counting: a full gradient is computed in one row-wise sweep (``_kernels.loss_grad``:
z_i = x_i·w, then ∇ += φ'(z_i) x_i / n while the row is hot), counted as nnz(X)
nonzeros touched — the same convention as an SDCA step that reads row i for its
dot product and its update and counts ‖x_i‖₀ — and as one data pass. Dense O(d)
vector work is not counted (the face-off counts nonzeros of X). A "step" is one
outer iteration (whatever line-search trials it needed), so one checkpoint
interval (``steps_per_pass`` = 1) is one iteration.

``smooth_constant`` is shared by the other full-gradient and variance-reduced
baselines (svrg.py, saga.py, lbfgs.py).
"""
from __future__ import annotations

import numpy as np

from .._checks import check_real
from ..problem import soft_threshold
from ._kernels import dense_dot, loss_grad
from .base import SMOOTH_LOSSES, MethodSpec, State, register

MAX_TRIALS = 100  # line-search doublings before giving up (2^100: only a NaN gets there)


def smooth_constant(problem, extra=0.0):
    """L_max = max_i ‖x_i‖²/γ + λ (+ extra): the largest smoothness constant of
    one term φ_i(x_i·w) + (λ/2)‖w‖², the step scale of SVRG, SAG and SAGA.

    For a non-smooth loss (γ = None) the scale of γ = 1 is returned: it only sets
    a default step size, which the user should tune.
    """
    gamma = problem.gamma or 1.0
    return problem.R ** 2 / gamma + problem.lam + extra


def check_step(step, allowed, what="step"):
    """A step option is one of the named rules in ``allowed`` or a finite float > 0."""
    if isinstance(step, str) and allowed:
        if step not in allowed:
            raise ValueError(f"{what} must be one of {list(allowed)} or a number > 0, got {step!r}")
        return step
    return check_real(what, step, low=0.0, low_open=True)


class FullGradientState(State):
    """What gd and agd share: the problem's arrays, the gradient oracle and the counters."""

    def __init__(self, problem):
        super().__init__(problem)
        self.grad_buf = np.empty(problem.n_features)
        self.deriv = np.empty(problem.n_samples)
        gamma = problem.gamma
        # L_f ≤ ‖X‖_F²/(γn): an upper bound from which the line search only has to come down.
        self.L = max(problem.frob_sq / (gamma * problem.n_samples), 1e-12)
        self.steps_per_pass = 1

    def f_grad(self, w):
        """(f(w), ∇f(w)) for the smooth part f = mean loss; one pass over X."""
        p = self.p
        fw = loss_grad(*p.csr_arrays, p.y, p.loss_code, p.s, w, self.grad_buf, self.deriv)
        self.nnz_touched += p.nnz
        self.data_passes += 1.0
        return fw, self.grad_buf.copy()

    def prox(self, y, g, L_):
        """T_L(y) = S_μ(L y − g) / (L + λ) (Nesterov 2013, eq. 2.8 for our Ψ)."""
        return soft_threshold(L_ * y - g, self.p.l1) / (L_ + self.p.lam)


class GDState(FullGradientState):
    """Proximal gradient descent (Nesterov 2013 §3) with backtracking or a fixed step."""

    def __init__(self, problem, sampling, rng, step_size="linesearch"):
        super().__init__(problem)
        self.step_size = check_step(step_size, ("linesearch",), "step_size")
        self.x = np.zeros(problem.n_features)
        self.fx = self.gx = None

    def run(self, n_steps):
        if self.gx is None:
            self.fx, self.gx = self.f_grad(self.x)
        for _ in range(n_steps):
            if self.step_size == "linesearch":
                self._backtrack()
            else:
                self.x = self.prox(self.x, self.gx, 1.0 / self.step_size)
                self.fx, self.gx = self.f_grad(self.x)
            self.steps += 1

    def _backtrack(self):
        x, fx, gx = self.x, self.fx, self.gx
        for _ in range(MAX_TRIALS):
            T = self.prox(x, gx, self.L)
            fT, gT = self.f_grad(T)
            d = T - x
            dd = dense_dot(d, d)
            # The descent condition f(T) ≤ f(x) + ⟨∇f(x), d⟩ + (L/2)‖d‖²; near the optimum its
            # two sides agree to rounding, so also accept the sufficient gradient form
            # ⟨∇f(T) − ∇f(x), d⟩ ≤ (L/2)‖d‖² (the Bregman divergence is ≤ that inner product).
            if (fT - fx - dense_dot(gx, d) <= 0.5 * self.L * dd
                    or dense_dot(gT - gx, d) <= 0.5 * self.L * dd):
                break
            self.L *= 2.0
        self.x, self.fx, self.gx = T, fT, gT
        self.L /= 2.0

    def iterate(self):
        return self.x, None


class AGDState(FullGradientState):
    """Nesterov's accelerated method with adaptive line search (2013, §4, method 4.9)."""

    def __init__(self, problem, sampling, rng):
        super().__init__(problem)
        d = problem.n_features
        self.x0 = np.zeros(d)
        self.x = self.x0.copy()
        self.v = self.x0.copy()
        self.A = 0.0
        self.gsum = np.zeros(d)  # Σ_k a_k ∇f(x_k): ψ_k's linear part

    def run(self, n_steps):
        lam, mu = self.p.lam, self.p.l1
        for _ in range(n_steps):
            A, L_ = self.A, self.L
            for _trial in range(MAX_TRIALS):
                c = 1.0 + lam * A
                a = (c + np.sqrt(c * c + 2.0 * L_ * c * A)) / L_  # root of a²/(A+a) = 2(1+λA)/L
                y = (A * self.x + a * self.v) / (A + a)
                _, gy = self.f_grad(y)
                T = self.prox(y, gy, L_)
                _, gT = self.f_grad(T)
                dP = L_ * (y - T) + gT - gy  # P'(T) = ∇f(T) + ξ, ξ ∈ ∂Ψ(T) from the prox's optimality
                if dense_dot(dP, y - T) >= dense_dot(dP, dP) / L_:
                    break
                L_ *= 2.0
            self.x = T
            self.A = A + a
            self.gsum += a * gT
            self.v = soft_threshold(self.x0 - self.gsum, self.A * mu) / (1.0 + self.A * lam)
            self.L = L_ / 2.0
            self.steps += 1

    def iterate(self):
        return self.x, None


register(MethodSpec(
    name="gd", make=GDState, kind="primal", axis="none", renamed={"step": "step_size"},
    source="Nesterov 2013, Gradient methods for minimizing composite functions, §3 (primal gradient method)",
    losses=SMOOTH_LOSSES, supports_l1=True, needs_lam=False,
))

register(MethodSpec(
    name="agd", make=AGDState, kind="primal", axis="none",
    source="Nesterov 2013, Gradient methods for minimizing composite functions, §4, accelerated method (4.9)",
    losses=SMOOTH_LOSSES, supports_l1=True, needs_lam=False,
))
