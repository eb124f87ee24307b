"""The face-off: primal RCD vs dual RCD (Csiba & Richtárik 2016; theory.md §4).

For a smooth loss, with c = λγn:

    iterations (Thm 1, up to the log factor)
        primal  max_j (‖f_j‖² + c)/(p_j c)      dual  max_i (‖x_i‖² + c)/(q_i c)
    cost of a step (10), (11)
        primal  Σ_j p_j ‖f_j‖₀                  dual  Σ_i q_i ‖x_i‖₀
    total work (12)–(15) = iterations × cost:
        uniform     T_P = nnz (1 + max_j ‖f_j‖²/c),   T_D = nnz (1 + max_i ‖x_i‖²/c)
        importance  T_P = nnz + C_P/c,                T_D = nnz + C_D/c
    (16)  C_P = Σ_j ‖f_j‖₀ ‖f_j‖²,   C_D = Σ_i ‖x_i‖₀ ‖x_i‖²

Theorem 3 (no zero rows or columns): ‖X‖_F² ≤ C_P ≤ n‖X‖_F²,
‖X‖_F² ≤ C_D ≤ d‖X‖_F², 1/d ≤ C_P/C_D ≤ n. Binary data: Lemma 9's extremes,
Theorem 4, Theorem 5, Corollary 6 and the Figure 1 map.
"""
from __future__ import annotations

import numpy as np
import pandas as pd

from .._checks import check_int

# How sure the prediction is, from the ratio of the two bounds on total work (the loser's over the
# winner's). The bounds are worst-case upper bounds, and measured speeds differ from them by factors of
# a few (the face-off's Figure 2: "matches" up to such factors), so a ratio below CLOSE_CALL is "too
# close to call". Above it the call is "likely": it is right in at least LIKELY_HIT_RATE of the measured
# cases, which `cdlab reproduce faceoff hit_rate` measures on every shipped dataset at λ = 1/n and
# 0.01/n and checks. Measured with that protocol (ε = 1e-6, whole datasets): below 2, 2 of 3 calls right,
# by at most 1.3× either way; from 2 on, 15 of 16 right, the miss heart_scale (d = 13) at 0.01/n, bound
# ratio 20, 2.1× slower. With --quick's 1000 rows and ε = 1e-4: below 2, 1 of 6 right (wrong by up to
# 2.4×); from 2 on, 11 of 13.
CLOSE_CALL = 2.0
LIKELY_HIT_RATE = 0.75


def _check_smooth(problem):
    if problem.gamma is None:
        raise ValueError(f"the face-off needs a smooth loss (γ known); {problem.loss!r} is not smooth: "
                         "try loss='smoothed_hinge'")
    if problem.lam <= 0:
        raise ValueError("the face-off needs lam > 0")


class FaceOffConstants:
    """The face-off's quantities that depend on X only, defined whatever the loss: nnz, ‖X‖_F²,
    C_P and C_D (eq. 16) and Theorem 3 (``theorem3``)."""

    def __init__(self, problem):
        self.problem = problem
        self.nnz, self.frob_sq = float(problem.nnz), problem.frob_sq
        self.C_P = problem.data.C_P
        self.C_D = problem.data.C_D
        self.theorem3 = theorem3_check(problem)


class FaceOff(FaceOffConstants):
    """Every face-off quantity of one problem (attributes: see the module and ``cdlab.theory`` docstrings)."""

    def __init__(self, problem):
        _check_smooth(problem)
        super().__init__(problem)
        n, d = problem.n_samples, problem.n_features
        c = problem.lam * problem.gamma * n
        self.c = c
        rn2, cn2 = problem.row_norms_sq, problem.col_norms_sq
        rnz, cnz = problem.row_nnz.astype(float), problem.col_nnz.astype(float)
        nnz, F2 = self.nnz, self.frob_sq
        # uniform sampling: p_j = 1/d, q_i = 1/n
        self.iters_primal_uniform = d * (1 + cn2.max() / c)
        self.iters_dual_uniform = n * (1 + rn2.max() / c)
        self.cost_primal_uniform = nnz / d
        self.cost_dual_uniform = nnz / n
        # importance sampling, eq. (14): p_j ∝ ‖f_j‖² + c, q_i ∝ ‖x_i‖² + c
        self.iters_primal_importance = d + F2 / c
        self.iters_dual_importance = n + F2 / c
        self.cost_primal_importance = float((cn2 + c) @ cnz) / (F2 + d * c)
        self.cost_dual_importance = float((rn2 + c) @ rnz) / (F2 + n * c)
        # total work, eqs. (12)–(15)
        self.T_P_uniform = nnz * (1 + cn2.max() / c)
        self.T_D_uniform = nnz * (1 + rn2.max() / c)
        self.T_P_importance = nnz + self.C_P / c
        self.T_D_importance = nnz + self.C_D / c

        self.prediction = self._predict()

    @staticmethod
    def _best_sampling(method, uniform, importance):
        """(work, (method, sampling), samplings tie?). Theorem 2: importance ≤ uniform, with equality
        when every ‖f_j‖² (‖x_i‖²) is the same; then uniform is named (no alias table needed)."""
        if uniform <= importance * (1 + 1e-9):
            return uniform, (method, "uniform"), importance <= uniform * (1 + 1e-9)
        return importance, (method, "importance"), False

    def _predict(self):
        primal = self._best_sampling("primal_cd", self.T_P_uniform, self.T_P_importance)
        dual = self._best_sampling("dual_cd", self.T_D_uniform, self.T_D_importance)
        (win_work, (method, sampling), tie), (lose_work, _, _) = sorted([primal, dual], key=lambda t: t[:2])
        ratio = lose_work / win_work
        side = "primal" if method == "primal_cd" else "dual"
        caveat = ""
        if tie:
            caveat += "; importance sampling gives the same bound here (equal norms)"
        if self.problem.l1 > 0:
            caveat += ("; caution: the face-off's theorems are for L2-regularised ERM, this problem has "
                       f"l1 = {self.problem.l1:g}, so primal RCD's bound does not cover it")
        confidence = confidence_of(ratio)
        if ratio <= 1 + 1e-9:
            text = (f"a tie: primal and dual RCD have the same bound on total work ({win_work / self.nnz:.3g} "
                    f"passes per log(1/ε) factor; C_P/C_D = {self.C_P / self.C_D:.3g})" + caveat)
            return dict(method=method, sampling=sampling, work=float(win_work), ratio=float(ratio), text=text,
                        confidence=confidence)
        if confidence == "likely":
            sure = (f"likely, not certain: the bounds differ by ≥ {CLOSE_CALL:g}×, and such calls were right in at "
                    f"least {LIKELY_HIT_RATE:.0%} of the cases measured on the shipped data")
        else:
            sure = (f"too close to call: the bounds differ by less than {CLOSE_CALL:g}× and are worst cases; such "
                    "calls went either way on the shipped data")
        text = (f"{side} RCD with {sampling} sampling ({sure}): the bound's total work per log(1/ε) factor "
                f"(eqs. 12–15) is {win_work / self.nnz:.3g} passes, "
                f"{ratio:.3g}× less than {'dual' if side == 'primal' else 'primal'} RCD at its best sampling "
                f"(C_P/C_D = {self.C_P / self.C_D:.3g}, n = {self.problem.n_samples}, d = {self.problem.n_features})"
                + caveat)
        return dict(method=method, sampling=sampling, work=float(win_work), ratio=float(ratio), text=text,
                    confidence=confidence)

    def table(self) -> pd.DataFrame:
        rows = []
        for side in ("primal", "dual"):
            for sampling in ("uniform", "importance"):
                it = getattr(self, f"iters_{side}_{sampling}")
                cost = getattr(self, f"cost_{side}_{sampling}")
                work = getattr(self, f"T_{side[0].upper()}_{sampling}")
                rows.append(dict(method=side, sampling=sampling, iterations=it, cost_per_step=cost,
                                 total_work=work, passes=work / self.nnz))
        return pd.DataFrame(rows).set_index(["method", "sampling"])

    def as_dict(self) -> dict:
        out = dict(n=self.problem.n_samples, d=self.problem.n_features, nnz=int(self.nnz), lam=self.problem.lam,
                   gamma=self.problem.gamma, loss=self.problem.loss, frob_sq=self.frob_sq,
                   C_P=self.C_P, C_D=self.C_D, ratio_C_P_C_D=self.C_P / self.C_D)
        for side in ("primal", "dual"):
            for sampling in ("uniform", "importance"):
                out[f"iters_{side}_{sampling}"] = float(getattr(self, f"iters_{side}_{sampling}"))
                out[f"cost_{side}_{sampling}"] = float(getattr(self, f"cost_{side}_{sampling}"))
        for key in ("T_P_uniform", "T_D_uniform", "T_P_importance", "T_D_importance"):
            out[key] = float(getattr(self, key))
        out.update({f"theorem3_{k}": v for k, v in self.theorem3.items()})
        out.update({f"prediction_{k}": v for k, v in self.prediction.items()})
        return out

    def __repr__(self):
        return f"FaceOff(C_P={self.C_P:.4g}, C_D={self.C_D:.4g}, prediction={self.prediction['text']!r})"


def confidence_of(ratio) -> str:
    """'likely' when the bound ratio (loser's total work over the winner's) is ≥ CLOSE_CALL, else
    'too close to call' (the rule and its measured basis: CLOSE_CALL's comment)."""
    return "likely" if ratio >= CLOSE_CALL else "too close to call"


def faceoff(problem) -> FaceOff:
    """The face-off quantities of ``problem`` (a smooth loss, λ > 0)."""
    return FaceOff(problem)


def faceoff_constants(problem) -> FaceOffConstants:
    """C_P, C_D and Theorem 3 of ``problem``'s data, for any loss (a non-smooth one has no total work T)."""
    return FaceOffConstants(problem)


def theorem3_check(problem) -> dict:
    """Theorem 3's bounds on this data and whether they hold.

    ``assumption`` says whether X has no zero rows or columns (the theorem's
    hypothesis); ``holds`` whether all six inequalities hold on the data
    (relative tolerance 1e-12 for rounding).
    """
    n, d = problem.n_samples, problem.n_features
    F2 = problem.frob_sq
    C_P, C_D = problem.data.C_P, problem.data.C_D
    ratio = C_P / C_D
    tol = 1e-12
    checks = [F2 <= C_P * (1 + tol), C_P <= n * F2 * (1 + tol), F2 <= C_D * (1 + tol), C_D <= d * F2 * (1 + tol),
              1 / d <= ratio * (1 + tol), ratio <= n * (1 + tol)]
    return dict(C_P_lower=F2, C_P_upper=n * F2, C_D_lower=F2, C_D_upper=d * F2, ratio_lower=1 / d, ratio_upper=n,
                ratio=ratio, assumption=bool((problem.row_nnz > 0).all() and (problem.col_nnz > 0).all()),
                holds=bool(all(checks)))


# ------------------------------------------------------------------ binary data
def _check_nd_omega(n, d, omega):
    n, d, omega = check_int("n", n), check_int("d", d), check_int("omega", omega)
    if not max(n, d) <= omega <= n * d:
        raise ValueError(f"omega = nnz must satisfy max(n, d) = {max(n, d)} ≤ omega ≤ n·d = {n * d} "
                         f"(no zero rows or columns), got {omega}")
    return n, d, omega


def _min_sum_sq(count, cap, omega):
    """min Σ_k c_k² over `count` integers 1 ≤ c_k ≤ cap summing to omega: spread evenly."""
    a, r = divmod(omega, count)
    return (count - r) * a * a + r * (a + 1) ** 2


def _max_sum_sq(count, cap, omega):
    """max Σ_k c_k² over `count` integers 1 ≤ c_k ≤ cap summing to omega: pile up."""
    if cap == 1:
        return omega
    t, rho = divmod(omega - count, cap - 1)
    if t >= count:  # omega = count·cap: every entry full
        return count * cap * cap
    return t * cap * cap + (1 + rho) ** 2 + (count - t - 1)


def binary_extremes(n, d, omega) -> dict:
    """min and max of C_P = Σ_j ‖f_j‖₀² and C_D = Σ_i ‖x_i‖₀² over binary n×d
    matrices with omega nonzeros and no zero rows or columns (Lemma 9)."""
    n, d, omega = _check_nd_omega(n, d, omega)
    return dict(min_C_P=_min_sum_sq(d, n, omega), max_C_P=_max_sum_sq(d, n, omega),
                min_C_D=_min_sum_sq(n, d, omega), max_C_D=_max_sum_sq(n, d, omega))


def theorem4_bounds(n, d, omega):
    """Theorem 4: (min C_P / max C_D, max C_P / min C_D) bounds C_P/C_D."""
    e = binary_extremes(n, d, omega)
    return e["min_C_P"] / e["max_C_D"], e["max_C_P"] / e["min_C_D"]


def theorem5(n, d, omega):
    """Theorem 5 for binary X ∈ B(n, d, ω): 'primal' if d ≥ n and ω ≥ n² (then C_P(X) ≤ C_D(X) for every
    such X), 'dual' if n ≥ d and ω ≥ d² (C_D ≤ C_P, by symmetry), 'tie' when both hold (n = d, X full:
    C_P = C_D), else None (the theorem says nothing).

    Source: Csiba & Richtárik, Theorem 5 (via Lemma 10 and Theorem 4: under the hypothesis
    max C_P ≤ min C_D over B(n, d, ω)). The formulas of the statement are lost in our text copy; the
    hypothesis ω ≥ n² is the one the paper's next sentence implies ("as long as d ≥ n², all matrices
    satisfy" it, since ω ≥ d): Corollary 6 is Theorem 5 with d ≥ n². tests/test_theory_faceoff.py
    checks it on every binary matrix of small sizes and against Lemma 9's extremes.
    """
    n, d, omega = _check_nd_omega(n, d, omega)
    if n == d and omega == n * d:
        return "tie"
    if d >= n and omega >= n * n:
        return "primal"
    if n >= d and omega >= d * d:
        return "dual"
    return None


def corollary6(n, d):
    """'primal' if d ≥ n² (then C_P ≤ C_D for every binary X with no zero rows or
    columns), 'dual' if n ≥ d² (C_D ≤ C_P), else None."""
    n, d = check_int("n", n), check_int("d", d)
    if d >= n * n:
        return "primal"
    if n >= d * d:
        return "dual"
    return None


def figure1_map(d, n_values, omega_values) -> np.ndarray:
    """Theorem 4's upper bound on C_P/C_D over a grid (Figure 1): array of shape
    [len(omega_values), len(n_values)], NaN where omega is infeasible
    (omega < max(n, d) or omega > n·d). Below 1: primal wins on every such X."""
    d = check_int("d", d)
    n_values = [check_int("n_values entry", v) for v in n_values]
    omega_values = [check_int("omega_values entry", v) for v in omega_values]
    out = np.full((len(omega_values), len(n_values)), np.nan)
    for a, omega in enumerate(omega_values):
        for b, n in enumerate(n_values):
            if max(n, d) <= omega <= n * d:
                out[a, b] = theorem4_bounds(n, d, omega)[1]
    return out
