"""Damped (primal) Newton's method with a backtracking line search ("newton").

For P(w) = (1/n) Σ_i φ(x_i·w; y_i) + (λ/2)‖w‖² with a smooth loss, each
iteration solves the Newton system

    H Δ = −∇P(w),    H = Xᵀ diag(φ''(Xw)) X / n + λI    (d × d)

by one of two inner solvers, the option ``solver``: "cholesky" forms H and
factors it (LAPACK's potrf/potrs through scipy.linalg; d ≤ MAX_FEATURES),
"cg" never forms it (conjugate gradients on Hessian-vector products, "The CG
path" below; memory O(n + d)), and "auto" (the default) takes the one of the
lower predicted seconds (``inner_solver``: ``predicted_ns`` of each), CG
wherever d > MAX_FEATURES; for the squared loss (d ≤ MAX_FEATURES) the run
starts on CG, whichever it predicts faster, and hands over to Cholesky once CG's
measured contraction says the rest would cost more (``cg_handover``). Either way the iteration
moves w ← w + tΔ, t the first of 1, ½, ¼, … that decreases P sufficiently
(Armijo; Boyd & Vandenberghe 2004, *Convex Optimization*, §9.5, Algorithm 9.5,
"damped Newton", with the backtracking line search of §9.2, α = ARMIJO,
β = ½). H ⪰ λI, so Δ is a descent direction and the method converges from any
start, quadratically once t = 1 is accepted (§9.5.3); the squared loss's P is
quadratic, so its first step lands on the optimum (t = 1). The smoothed hinge's
φ' is piecewise linear: H is its generalized Hessian (φ'' = 1/s on the quadratic
piece, 0 off it), the semismooth Newton method liblinear also uses for the
L2-loss SVM; its line search starts from the exact minimiser along Δ (``_piecewise_line``,
which cites what it saves: its slope is piecewise linear), where halving from t = 1 stops short at
the first kink crossed. The hinge loss itself: ``_hinge_newton``
(stages of the smoothed hinge, s → 0, certified by the hinge's gap).
The peer in benchmarks/race.py is liblinear's primal solver, a
trust-region Newton method with conjugate-gradient inner steps (Lin, Weng &
Keerthi 2008, JMLR 9, "Trust region Newton method for large-scale logistic
regression"), and scikit-learn's newton-cholesky, which forms the same H.

The line search reads X once, for u = XΔ; its trials then cost O(n) each with
no pass over X: along the line z(t) = Xw + t u, so
P(w + tΔ) = (1/n) Σ φ(z_i + t u_i) + (λ/2)‖w + tΔ‖². A trial is accepted when
P(w + tΔ) ≤ P(w) + ARMIJO·t·∇P·Δ, or when the slope along the line is still
h'(t) ≤ ARMIJO·h'(0): for convex h, h(t) − h(0) ≤ t h'(t), so the second test
implies the first, and unlike a difference of two values of P it does not drown
in rounding near the optimum.

Work, honestly counted: an iteration reads X twice — one row-order sweep for
∇P and H together, one for u = XΔ — so it touches 2·nnz nonzeros (2 passes, the
face-off's unit; a "step" is one iteration, ``steps_per_pass`` = 1 as for every
full-gradient method; a run that samples H reads otherwise, below, and its
``steps_per_pass`` is measured). Its flops are more than those passes suggest:
O(Σ_i nnz_i²) for H (O(n d²) on the dense path) plus O(d³) for the Cholesky
factorisation, against O(nnz) for a pass — the method pays when d is small and
the first-order methods need many passes (small λ). Checkpoints are the
driver's: α = −φ'(Xw), the duality gap → 0 (on the Newton–CG path its Xw and Xᵀα
come from the sweep that gives the next iteration its ∇P, ``certificate_sums``: one
read of X for both, its seconds the solver's; on the Cholesky path the same while
the run samples H, else the start's Xᵀα from the read that forms the first H,
``_cholesky_start``; the squared loss's CG the start's with CG's first residual; at
w = 0, on the CG path and while the run samples H, from data facts, no read of X:
α(0) = −φ'(0) is a multiple k·y of the labels, so Xᵀα = k·Xᵀy, ``_sums_at_zero``,
``_cg_start_sums``); under eval_every="auto" one after
every iteration whose starting gap, ‖∇P‖²/(2λ), is small enough for it to end
the run (``certificate_due``; the squared loss on the CG path: after the CG
iterations whose carried residual puts the gap within tol — r = −∇P, or on the
dual system r = y − α − Xw with the gap ‖r‖²/(2n) at the pair (w, α) the state
reports; the squared
loss on Cholesky's path and the runs with tol ≤ 0: after every iteration where
one outweighs EVERY_STEP_RATIO checkpoints, at the driver's geometric intervals
elsewhere; a run that handed over from CG to Cholesky: after its Cholesky steps
where it has a tol, never at the CG step it handed over at).

H is formed one of two ways, the cheaper by the cost model of ``dense_rows``:
on sparse rows by a numba sweep that adds φ''_i x_i x_iᵀ over each row's
nonzeros (Σ_i nnz_i²/2 multiply-adds), on dense rows by densifying blocks of
rows and calling BLAS (syrk: n d²/2 multiply-adds at BLAS speed). Measured per
formation of H, one thread, best of 3 (sparse sweep vs blocks densified by
scipy's row slicing and BLAS): a9a 7 ms vs 26, w8a 14 vs 160, mushrooms 3.4 vs
5.6, ijcnn1 9.5 vs 10.3, phishing 8.6 vs 5.5, madelon 455 vs 19, dense 1e5 ×
500 2.5–3.6 s by BLAS (the sparse sweep's model says ~25 s). Densifying by
numba (``densify_rows``, gradient in the same read) instead of scipy's slicing
then made the BLAS path 2–7× cheaper at small d (ijcnn1 14 ms vs 33 sparse,
phishing 3.3 vs 23, both on a machine ~4× slower then, under others' load).
BLAS and LAPACK
run on the run's ``n_jobs`` threads (threadpoolctl), one by default.

Far from the optimum (a step from a gap above SAMPLE_REACH·√(tol·P)) a run with ``sample_size`` m > 0 (not the
squared loss, whose one step lands on the optimum) forms H from a sample of m rows instead, its diagonal
exact, until a step forms the exact H (``cdlab.solvers._sampled_hessian``: the rule, the checks that end the
sampling, the measurements); each such step reads X for ∇P and diag(H) (or takes them from the checkpoint's
sweep), for the sampled rows and for XΔ.

Memory: H and its Cholesky factor, 2·d² doubles (+ BLOCK_ROWS × d on the dense
path and a few length-n vectors), bounded by MAX_FEATURES and
refused before anything is allocated; l1 > 0 (elastic net, which needs a
proximal Newton method) and the absolute loss are refused; the hinge runs
``_hinge_newton``'s stages of the smoothed hinge on this path.

The CG path (``cdlab.solvers._newton_cg``): a truncated Newton method (Nocedal
& Wright 2006, Algorithm 7.1, "line search Newton–CG"; liblinear's primal
solver is its trust-region sibling). Each iteration reads X once for ∇P, then
runs CG preconditioned by diag(H) (Jacobi, ``_newton_cg``'s docstring; reading
X's dense rows, ``Data.X_dense``, where X is kept so, or far from the optimum the products'
float32 rows, ``product_rows``; its CSR arrays elsewhere) on
H Δ = −∇P from Δ = 0 with products Hv = Xᵀ(D(Xv))/n + λv, each
reading X twice (a row whose φ''_i is 0 once; over dense rows beyond the cache, rounded to float32:
``product_rows``, XΔ then rounded alike), until ‖r‖ ≤ η‖∇P‖ with the
forcing term η of ``_newton_cg.forcing_term`` (their condition 7.3):
min(½, √‖∇P‖) (superlinear convergence, their Theorem 7.2), or for the logistic
loss from the second iteration on Eisenstat & Walker's choice 2 (1996, eq.
2.6), which follows the contraction of ‖∇P‖ (FORCING_GAMMA), or
‖r‖ ≤ CG_GAP_SHARE·√(2λ·tol) (a step the run's certificate
needs no more of), or MAX_CG_ITERATIONS products; XΔ is summed from the products'
Xp, so the line search above reads no X. An iteration thus reads X
1 + 2k times for k products (2k for the first from w = 0 on data whose Xᵀy is known:
``_sums_at_zero``), all counted (nnz_touched, passes), and at most
2·MAX_CG_ITERATIONS + 1 times: the bound ``iteration_ns`` (``MethodSpec.step_ns``)
predicts, a run stopping only between steps. The squared loss's P is
quadratic: its CG path is preconditioned CG on the normal equations (XᵀX/n + λI)w = Xᵀy/n,
carried across steps, one step per CG iteration (2 passes; 1 more at a restart and at the start,
none there once the data's Xᵀy is known), certified by the driver between them (its products over
``product_rows``' float32 rows too, refined on float64 ones where their solution does not certify); where
d ≥ DUAL_CG_RATIO·n,
CG on its dual system (I + XXᵀ/(λn))α = y instead (``cdlab.solvers._dual_cg``: 2 passes an
iteration, none at the start, 2 at a restart), certified at the pair (w = Xᵀα/(λn), α). Memory: a few
length-d and length-n vectors, and in the n_jobs mode 2·n_jobs·d doubles of the row blocks' sums (and
``product_rows``' float32 copy of dense rows beyond the cache, 4 bytes an entry).
With ``n_jobs`` > 1 (the n_jobs mode) the CG path's sweeps over X (the gradient's, the Hessian-vector
products, the checkpoint's fused sweep) run over n_jobs row blocks, one per thread (``_newton_cg``),
unless ``cg_serial_reason`` says why not (X below CG_PARALLEL_MIN_NNZ nonzeros; the squared loss's CG
on its dual system).
"""
from __future__ import annotations

import contextlib
import math

import numpy as np
from numba import njit

from .. import losses as L
from .._checks import check_choice
from ._kernels import beyond_cache, dense_dot, entry, full_rows, row_arrays, row_margins
from ._dual_cg import dual_cg_steps, dual_preconditioner
from ._hinge_newton import HingeNewtonState
from ._newton_cg import certified_jacobi_sweep, cg_steps, jacobi_sweep, newton_cg_direction, nonempty_columns
from ._piecewise_line import smoothed_hinge_line_min
from ._sampled_hessian import (SAMPLE_CURVATURE_RATIO, SAMPLE_PROGRESS, SAMPLE_REACH, curvature_along,
                               densify_sampled, gram_rows, raise_diagonal, sample_size)
from ._threads import blas_threads, parallel_section, row_blocks
from .base import SMOOTH_LOSSES, MethodSpec, State, register
from .costs import auto_cap, auto_checkpoints, checkpoint_ns

# Whether the Cholesky path's start checkpoint takes its sums from the first iteration's read of X
# (``NewtonState._cholesky_start``; a Python-level switch, for benchmarks/cholesky_start_bench.py).
CHOLESKY_START_FUSED = True
# ... and the squared loss's CG its start's sums from the sweep that starts CG (``NewtonState._cg_start_sums``; a
# Python-level switch, for benchmarks/cholesky_start_bench.py --solver cg)
CG_START_FUSED = True
# Whether the CG path's gradient sweeps that start no checkpointed step far from the run's tol read the products'
# rows (``product_rows``: float32 where X is dense beyond the cache) rather than X's float64 values
# (``NewtonState._gradient_rounds``); a Python-level switch, for benchmarks/gradient_f32_bench.py (``product_rows``'
# docstring has the rule and the measurement).
GRADIENT_ON_PRODUCT_ROWS = True
# Whether a checkpoint at w = 0 on the CG path, or on the Cholesky path while it samples H, takes its sums and the
# first step's ∇P and diag(H) from data facts (``NewtonState._sums_at_zero``: Xᵀy and the column norms) instead of
# a read of X; a Python-level switch, for benchmarks/sums_at_zero_bench.py.
SUMS_AT_ZERO = True
# The inner solvers of the Newton system; "auto" picks by the cost model (``inner_solver``).
SOLVERS = ("auto", "cholesky", "cg")
# The most features the Cholesky path takes: H and its factor, 2·d² doubles, are 256 MiB at 4096.
MAX_FEATURES = 4096
# Newton's iterations to a certified gap ≤ 1e-6·|P*|, by loss where a constant: smoothed hinge 4–23 (median 9.5,
# an earlier calibration); the squared loss's P is quadratic: one Cholesky step. The logistic loss's (2–12) are
# ``newton_iterations``'.
NEWTON_ITERATIONS = {"squared": 1, "smoothed_hinge": 12}
# The logistic loss's Newton iterations grow with how far w = 0 starts from the optimum, read off the duality gap
# there (``logistic_start_gap``) in decades above GAP_REFERENCE·P(0) (P(0) = log 2): L = log10(gap(0)/(1e-6·log 2)),
# iterations ITERATIONS_PER_DECADE·L + ITERATIONS_OFFSET, at least MIN_ITERATIONS (the first step and one that
# certifies). Fitted by least squares on Newton–CG runs to a certified gap ≤ 1e-6·|P*| (benchmarks/newton_cost_fit.py:
# the ten shipped data sets, the race's text-like problem at 1e7 nonzeros and its dense 1e5 × 500, λ = 1/n and
# 0.01/n, rows scaled by their mean norm): 24 runs of 2–12 iterations, L from 3.8 (madelon 1/n: 2 iterations) to 11.1
# (w8a 0.01/n: 12), measured ÷ modelled 0.63–1.34. The constant 6 it replaces was 3× off on madelon 1/n and 2× on
# w8a 0.01/n. Fitted on the CG path's runs, it predicts the Cholesky path's iterations too (exact Newton steps: as
# many as inexact ones or fewer; a9a 0.01/n 7 on both, ijcnn1 1/n 6 on both).
GAP_REFERENCE = 1e-6
ITERATIONS_PER_DECADE = 1.20
ITERATIONS_OFFSET = -3.74
MIN_ITERATIONS = 2.0
# The CG path: at most this many Hessian-vector products per Newton iteration (so one iteration, which a run
# cannot stop inside, reads X at most 2·MAX_CG_ITERATIONS + 1 times); the forcing term usually stops CG first.
MAX_CG_ITERATIONS = 100
# With α = −φ'(Xw) (the driver's), the gap is exactly ‖∇P(w)‖²/(2λ) (l1 = 0); CG's model gradient after the
# step is −r, so CG stops once ‖r‖ ≤ CG_GAP_SHARE·√(2λ·tol): the model's gap is CG_GAP_SHARE²·tol.
# Measured (logistic, certified relative gap 1e-6, λ = 1/n and 0.01/n, the ten shipped data sets): 0.7 read
# 0.79–1.0× the passes of no such stop (a9a 143 → 105, ijcnn1 89 → 71, phishing 82 → 64 at 1/n); 0.5
# 1–5 % more than 0.7, 0.9 within 2 % of it.
CG_GAP_SHARE = 0.7
# γ of the forcing term (``_newton_cg.forcing_term``) by loss: Eisenstat & Walker's choice 2 from the second Newton
# iteration on; absent (0): min(½, √‖∇P‖) throughout. Far from the optimum Newton's steps on the logistic loss
# contract ‖∇P‖ by a roughly constant factor however exactly CG solves (reuters_moneyfx at λ = 0.01/n: ~0.37 an
# iteration at η from 0.29 down to 0.007), and √‖∇P‖, which falls with ‖∇P‖'s scale, pays products there for
# nothing. Measured (whole solves to a certified relative gap of 1e-6, interleaved, one thread, passes read by
# the CG path, √ rule → γ = 0.9): logistic reuters_moneyfx 260 → 198 (0.01/n), 53 → 46 (1/n), rcv1_small
# 98 → 93 (0.01/n), w8a 64 → 60 (1/n), text-like 1e7 69 → 65 (0.01/n); equal on dense 1e5 × 500, madelon,
# text-like 1/n; more on a9a 1/n 126 → 137, colon-cancer 0.01/n 78 → 82, heart_scale 0.01/n 49 → 53 (none of
# them Newton's race: SDCA is faster there). γ = 0.9 with η = ½ at the first iteration (their choice) read
# 1.25× the passes on madelon 0.01/n; liblinear's stopping rule on the quadratic model's decrease (its
# newton.cpp) read more everywhere but reuters. The smoothed hinge takes the √ rule: with γ = 0.9
# reuters_moneyfx and rcv1_small at 0.01/n read twice the passes (1123 → 2172, 1080 → 2266), the text-like
# problem 0.4× (648 → 243).
FORCING_GAMMA = {"logistic": 0.9}
ARMIJO = 1e-4  # sufficient decrease of the line search (Boyd & Vandenberghe's α)
# the smoothed hinge's line search starts from the root of its piecewise linear slope (``_piecewise_line``); False:
# backtracking alone, as for the other losses (for benchmarks/hinge_newton_bench.py --line-search)
EXACT_LINE_SEARCH = True
MAX_TRIALS = 60  # halvings of t before the iteration gives up moving (2^-60: rounding only)
# When H + λI is not positive definite in floating point, shift its diagonal by SHIFT_FLOOR × max H_jj,
# then 10× more, at most MAX_SHIFTS times (``NewtonState._newton_direction``).
SHIFT_FLOOR = 1e-14
MAX_SHIFTS = 40
# Rows densified at once on the dense path: a block of BLOCK_ROWS × d doubles (at most 32 MiB at MAX_FEATURES).
BLOCK_ROWS = 1024
# The cost model (ns on one thread), fitted by benchmarks/newton_cost_fit.py: whole calls to a certified gap ≤
# 1e-6·|P*| minus their checkpoints, weighted least squares (relative error, non-negative), on the shipped data
# sets, the race's text-like problem at 1e7 nonzeros and its dense 1e5 × 500, logistic and squared, λ = 1/n and
# 0.01/n, rows scaled by their mean norm. A Cholesky iteration (``cholesky_iteration_ns``): forming H by the
# sparse sweep per multiply-add, or by BLAS's syrk on densified rows per multiply-add plus per densified entry
# (``densify_rows``), each over the rows it reads (a sampled H's m: ``_sampled_hessian``); LAPACK's factorisation
# per multiply-add of its d³/3; per nonzero its two passes over X and the O(n) line search; per iteration its
# Python and LAPACK calls. Refitted with the sampled Hessian (its steps' own gradient sweeps at ``sweep_ns``):
# measured ÷ fitted 0.76–2.54 (10–90 % 0.91–1.11; heart_scale's squared runs 2.5, their one iteration carrying a
# call's fixed cost); the fit before it had put 6.1 ns on a nonzero where this one puts 1.55, 1.5–2× over
# the whole calls since (a9a logistic 1/n: 55 ms modelled, 25 measured). The fit puts the overhead at 0.38 ms,
# which folds in the fixed cost of a call that every method pays (~1 ms, below); it is kept at heart_scale's
# logistic iterations' 0.15 ms.
SPARSE_NS_PER_MADD = 1.24
BLAS_NS_PER_MADD = 0.032
FACTOR_NS_PER_MADD = 0.027
DENSIFY_NS_PER_ENTRY = 2.03
ITERATION_NS_PER_NNZ = 1.55
ITERATION_OVERHEAD_NS = 1.5e5
# The CG path's cost model (``cg_products``, ``cg_iteration_ns``), fitted likewise on whole calls: per sweep over
# X, ns per nonzero (beyond the last-level cache more: X streams from memory), per entry of dense rows, and per
# row; per CG iteration the vector work on X's nonempty columns (the ∇P step counts as one); per Newton step the
# logistic line search per example. Refitted beside the Cholesky path's (the products counted, not predicted):
# measured ÷ fitted 0.76–1.90 (10–90 % 0.86–1.47: the dense problem's squared runs 1.8–1.9); the dense rows' entry
# half the fit before (0.31 ns), whose products read float64 rows (``product_rows``), and a row 0.72 ns where it
# was 5. A call's fixed cost, fitted at ~0.7 ms (state, trace and result, the same for every method), is not
# modelled: auto compares methods that all pay it. An earlier model counted 0.5 ns a nonzero a sweep and 1 ns an
# entry of n + d a CG iteration, and underpredicted the CG path 1.3–4.7× on sparse data with short rows (w8a
# logistic 1/n: 19 ms modelled at its products, 62 measured).
CG_NS_PER_NNZ = 0.55
CG_NS_PER_NNZ_BEYOND_CACHE = 1.1
CG_NS_PER_DENSE_ENTRY = 0.15
CG_NS_PER_ROW = 0.72
CG_NS_PER_COLUMN = 11.1
CG_NS_PER_LINE_EXAMPLE = 18.1
# Products of a whole solve to a certified relative gap 1e-6, Jacobi-preconditioned CG: a power law in κ = 1 +
# λ̂/(γλ), λ̂ ≈ λ₂(XᵀX)/n, the top of the spectrum once its largest eigenvalue is set aside (CG clears an
# outlier in about one product, Nocedal & Wright 2006, §5.1: madelon's λ₁/n = 0.996 is its rows' mean
# direction, λ₂/n = 4e-4), estimated on a sample of rows (``Data.gram_bulk_estimate``: 0.26–1.06× the exact
# λ₂(XᵀX)/n on the data below, the small samples of rcv1_small, colon-cancer and madelon lowest), fitted (least
# squares on the logs, benchmarks/newton_cost_fit.py) on the ten shipped data sets, the race's text-like problem
# at 1e7 nonzeros and its dense 1e5 × 500, λ = 1/n and 0.01/n, rows scaled by their mean norm: squared 8.85
# κ^0.134 (measured ÷ fitted 0.15–5.4, 10–90 % 0.29–4.0: mushrooms, reuters_moneyfx and a9a need 3–5× more, the
# dense and text-like problems 0.15–0.3×). On λ₁ instead the fit was no better (squared 0.18–11) and put
# madelon's products 2–4× too high. The logistic loss: ``newton_iterations`` × CG_PRODUCTS_PER_ITERATION ×
# κ^CG_PRODUCTS_PER_ITERATION_EXPONENT; the least-squares fit of the products an iteration is 2.59 κ^0.100
# (measured ÷ fitted 0.32–2.3), but the scale is the middle of 3.8–4.6, the range where auto (with
# auto.SDCA_NS_PER_STEP's 130–160 ns) picked within 1.3× of the fastest of SDCA, Newton–CG and Newton–Cholesky
# on all 48 problems of benchmarks/auto_calibration.py --big (logistic and squared, λ = 1/n and 0.01/n; its
# measured seconds, the picks replayed offline):
# at the fit's scale auto took CG where SDCA was 1.4–1.6× faster (a9a, mushrooms, phishing at 1/n; a9a and phishing
# at 0.01/n), at 5.0 Cholesky on mushrooms 0.01/n (1.66× CG's seconds). So the law errs high where CG is cheap:
# whole solves measured ÷ modelled 0.16–1.28 (10–90 % 0.30–1.18), the text-like and dense problems 0.16–0.34. The
# power law on κ alone it replaces (7.50 κ^0.211 for the whole solve) was 0.25–2.4 off and under on exactly
# those problems where SDCA wins (a9a 1/n 2.2, phishing 1.8).
# κ_F = 1 + ‖X‖_F²/(nγλ) bounds κ from above (λ_max(XᵀX) ≤ ‖X‖_F²) but is far above it on the text-like and
# dense problems; √κ_F, the growth of CG's worst case (Nocedal & Wright 2006, eq. 5.36), fitted on plain CG as
# CG_PRODUCTS_FLOOR + CG_PRODUCTS_PER_ROOT_KAPPA √κ_F, overpredicted those problems' products 8–220× and the others'
# 2–10× at 0.01/n: it only caps the laws (per Newton iteration), which interpolate over λ ∈ [0.01/n, 1/n]. The
# smoothed hinge, not measured so: that √κ_F law alone. The squared loss's products are counted on the system CG
# runs: the dual one where d ≥ DUAL_CG_RATIO·n (rcv1_small, colon-cancer), the primal one elsewhere.
CG_PRODUCTS_SCALE = {"squared": 8.85}
CG_PRODUCTS_EXPONENT = {"squared": 0.134}
CG_PRODUCTS_PER_ITERATION = 4.2
CG_PRODUCTS_PER_ITERATION_EXPONENT = 0.10
CG_PRODUCTS_FLOOR = 5.0
CG_PRODUCTS_PER_ROOT_KAPPA = {"squared": 0.35, "logistic": 0.33, "smoothed_hinge": 0.65}
# "auto" takes the CG path where its predicted seconds times this margin are below Cholesky's (``inner_solver``):
# below 1, CG is kept where predicted up to 1/CG_MARGIN× slower, as its products law errs high (CG_PRODUCTS_PER_
# ITERATION's comment) while the Cholesky path's refit is within 10 % on most problems. Chosen with the sampled
# Hessian and both refits, beside auto.NEWTON_CG_MARGIN, as the middle of the margins (0.7–0.8) that gave the least
# worst pick ÷ best over the 48 problems of benchmarks/auto_calibration.py --big (its measured seconds, the
# Cholesky path's re-measured on the logistic loss, the picks replayed offline): 1.12 (the text-like problem's
# logistic loss at 1/n takes SDCA, 286 ms against CG's 256); at 0.9–1.1 w8a logistic 1/n takes Cholesky (66 ms
# against CG's 52), at 0.6 mushrooms squared 1/n takes CG (4.25× SDCA's seconds) and a9a logistic 1/n SDCA (1.34×
# the sampled Cholesky path's). Before the sampled Hessian: 1.0, from the earlier models' replays (0.9–1.2 there).
CG_MARGIN = 0.75
# The n_jobs mode's row blocks pay on X with at least this many nonzeros; below, the CG path's sweeps stay
# serial (each of ~0.1–0.4 ms does not pay for a parallel launch and the blocks' length-d sums). Whole calls,
# logistic, λ = 1/n and 0.01/n, 2 threads ÷ 1 (benchmarks/newton_threads_bench.py, medians of 7 interleaved
# pairs, beside other work): heart_scale (3.4 k nonzeros) 0.62–0.75, rcv1_small (78 k) 0.83–0.87, colon-cancer
# (124 k) 0.98–1.01, mushrooms (171 k) 0.98–1.05; phishing (332 k) 1.07–1.28, reuters_moneyfx (340 k)
# 1.25–1.55, a9a (452 k) 1.28–1.31, w8a (580 k) 1.26–1.34, madelon (1 M) 1.16–1.19, the race's text-like
# problem (10 M) 1.68–1.73, its dense 1e5 × 500 (50 M) 1.40–1.50 (float64 products, before ``product_rows``).
CG_PARALLEL_MIN_NNZ = 250_000
# Under eval_every="auto" the geometric cadence checkpoints at about 1, 2, 4, 8 iterations and certified
# 1–3 of Newton's 6–13 iterations late; checkpointing after every iteration instead costs ~K − log₂K − 1
# more checkpoints and saves those iterations: it pays when an iteration costs at least this many
# checkpoints (measured ratio: madelon 14, mushrooms 6.2, phishing 3.9, w8a 3.2, ijcnn1 1.8, a9a 1.7). The
# rule decides the squared loss's runs on Cholesky's path and those with tol ≤ 0 (``checkpoints_every_step``);
# the other runs with tol > 0 checkpoint after every step that is due (below), which costs fewer checkpoints
# than the geometric cadence and is never late (w8a and mushrooms logistic 1/n, CG: 54 → 47 ms, 8.4 → 7.4).
EVERY_STEP_RATIO = 2.0
# A run checkpointing after every step skips the checkpoints that cannot stop it (``NewtonState.certificate_due``): the
# gap at the iterate w_k a step starts from is exactly G_k = ‖∇P(w_k)‖²/(2λ) (α = −φ'(Xw), l1 = 0), read off the step's
# own gradient, and the step from a G_k above DUE_REACH·√(tol·P) is not checkpointed. Measured (logistic, the
# ten shipped data sets, λ = 1/n and 0.01/n, both inner solvers, rows scaled by their mean norm; every step of
# runs to a relative gap of 1e-12): for each relative tol in 1e-2, 1e-3, …, 1e-12 no step from above that
# point reached tol, the nearest ending at 7× tol; a step reaches √tol-small gaps by quadratic convergence only.
# A wrong skip costs one step more. The trace keeps the start, those checkpoints and the last.
DUE_REACH = 1000.0
# Checkpoints after steps that run so, the start's aside (``solve_checkpoints``): 2–4 in the runs above to a
# relative gap of 1e-6 (ijcnn1 1/n 2, madelon 1/n 2, mushrooms 0.01/n 3, phishing 0.01/n 4, reuters_moneyfx 1/n 4).
DUE_CHECKPOINTS = 3
# The squared loss on the CG path carries CG's residual r = −∇P(w) (``cg_steps``; on the dual system r = y − α − Xw,
# the gap at (w, α) exactly ‖r‖²/(2n): ``_dual_cg``), so the gap at the driver's dual
# point, ‖∇P(w)‖²/(2λ), is estimated after every step without a pass over X: a step is due when that estimate is
# at most SQUARED_DUE_FACTOR·tol and ``due_spacing`` steps have run since the last checkpoint, or, whatever the
# estimate says, once a run has gone DUE_GUARD_RATIO × its steps at the last checkpoint + DUE_GUARD_STEPS steps
# without one. The carried residual follows the true one until rounding parts them; past that it keeps falling
# while the true one stalls (a tol below what the certificate can reach: 300 × 60, columns scaled 1 … 1e-4,
# λ = 1e-9, carried gap 3e-54 against a certified 1e-21), so every due checkpoint that does not certify doubles
# ``due_spacing`` (``checkpointed``; on float32 rows the first such checkpoint switches to float64 ones instead:
# ``product_rows``): a drift costs a step, a stalled run checkpoints about log₂(steps) times.
# madelon, λ = 1/n: 5 → 2 checkpoints (start and end), 10.5 → 9.3 ms; λ = 0.01/n: 7 → 2, 22.8 → 12.5 ms (dense
# rows included).
SQUARED_DUE_FACTOR = 1.0
# The squared loss's CG runs on its dual system, (I + XXᵀ/(λn)) α = y (``_dual_cg``), where X's nonempty columns are
# at least this many times n: there the primal system's null space (d − n eigenvalues λ) is large, and Jacobi's
# diagonal spreads it.
# Measured (whole calls to a certified relative gap 1e-6, rows scaled by their mean norm; primal Jacobi → dual,
# ms): rcv1_small (d = 47 n) 1/n 7.5 → 4.5, 0.01/n 79 → 16 (433 → 120 passes); colon-cancer (d = 32 n) 2.0 → 2.0
# and 3.2 → 3.7; reuters_moneyfx (d = 1.07 n), kept on the primal side: 0.01/n 132 → 227 (349 → 668 passes), the
# column scaling Jacobi brings outweighing its 545-dimensional null space.
DUAL_CG_RATIO = 2.0
DUE_GUARD_RATIO = 4
DUE_GUARD_STEPS = 16
# The squared loss under solver="auto" (d ≤ MAX_FEATURES, on the primal system) starts on the CG path, whichever
# inner solver the model predicts faster — its CG products law cannot see conditioning that no diagonal
# preconditioner undoes (the rotated rows below: CG 19–94 ms where Cholesky takes 12 and the model put CG at 8–13)
# — and hands over to Cholesky (``NewtonState._hands_over``) once the products CG still needs to reach the run's
# tol, at its measured contraction (read over products where the gap fell at each), cost more than one Cholesky
# iteration (``cg_handover``: its predicted ns over a product's, H below), or once CG has run H products (the
# ski-rental rule: a run then costs at most about twice Cholesky's). Where a Cholesky iteration costs fewer than
# HANDOVER_MIN_PRODUCTS products the run takes the inner solver predicted faster from the start: the CG start (a
# sweep for ∇P, two products before it can judge, one checkpoint more) then stands to gain too little (a judgement,
# not a measured optimum). Measured (whole calls, rows scaled by their mean norm, tol 1e-6): the race's dense
# 1e5 × 500, Cholesky 536–546 ms → 312–385 ms at λ = 1/n and 0.01/n (4–5 products, no handover); dense 4000 × 300
# rows rotated, column scales spanning √cond (benchmarks/handover_bench.py, H = 28): cond 1e8 hands over after 2
# products at λ = 0.1/n and 0.01/n where CG alone takes 144 and 342, cond 1e3 after 5 and 4 (CG alone 93 and 142),
# auto then within 1.13–1.21× of Cholesky alone.
HANDOVER_MIN_PRODUCTS = 16


# The line search's trials write the loss weights (deriv, curv) at their points from the exps that give the
# trial's value and slope (``line_point``), so the iteration after an accepted trial computes no ``loss_weights``
# (an exp per example): where no checkpoint's sweep gives them (``certificate_sums``) the run saves that pass over
# the examples. Measured (benchmarks/line_weights_bench.py, whole calls, recomputed ÷ written, 7 pairs, the same
# iterates): logistic ijcnn1 1.04 and 1.06 (λ = 1/n, 0.01/n), a9a 1.02 and 1.03, w8a 1.02 and 1.02, phishing
# 0.01/n 1.01, mushrooms 0.01/n 1.02; madelon and reuters_moneyfx 0.01/n (checkpointed after most steps) 0.99–1.00.
LINE_SEARCH_WEIGHTS = True


# A run that samples H (``_sampled_hessian``) forms it exactly on its last steps, those from SAMPLE_REACH·√(tol·P):
# 2–5 in the runs of benchmarks/sampled_hessian_bench.py to a certified relative gap 1e-6 (ijcnn1 and a9a 2, mushrooms
# and w8a 2–3, phishing 2–5); the cost model counts this many.
SAMPLED_RUN_EXACT_ITERATIONS = 3.0


def hessian_ns(problem) -> tuple[float, float]:
    """The cost model's ns to form H (sparse sweep: Σ_i nnz_i²/2 multiply-adds; BLAS on densified
    blocks of rows: n d²/2 multiply-adds + n d entries written), one thread."""
    n, d = problem.n_samples, float(problem.n_features)
    sparse = SPARSE_NS_PER_MADD * problem.data.row_nnz_sq_sum / 2
    dense = BLAS_NS_PER_MADD * n * d * d / 2 + DENSIFY_NS_PER_ENTRY * n * d
    return sparse, dense


def dense_rows(problem) -> bool:
    """Whether H is cheaper by BLAS on densified rows than by the sparse sweep (``hessian_ns``)."""
    sparse, dense = hessian_ns(problem)
    return dense < sparse


def cholesky_iteration_ns(problem, sampled=False, sparse_gram=False) -> float:
    """Predicted ns of one Cholesky iteration on one thread: H the cheaper way (``sampled``: from ``sample_size``
    of the n rows; ``sparse_gram``: by the sparse sweep, every row curved at its most), its factorisation (d³/3
    multiply-adds at FACTOR_NS_PER_MADD) and the rest (ITERATION_NS_PER_NNZ, ITERATION_OVERHEAD_NS); a sampled one
    also the gradient's own sweep (``sweep_ns``), which the exact H's read fuses."""
    d = float(problem.n_features)
    rows = sample_size(problem)
    hessian = (hessian_ns(problem)[0] if sparse_gram else min(hessian_ns(problem))) * (
        rows / problem.n_samples if sampled else 1.0)
    return (hessian + FACTOR_NS_PER_MADD * d ** 3 / 3 + ITERATION_NS_PER_NNZ * problem.nnz + ITERATION_OVERHEAD_NS
            + (sweep_ns(problem) if sampled else 0.0))


def cholesky_iterations(problem) -> tuple[float, float]:
    """(exact, sampled): the Cholesky iterations of a whole solve (``newton_iterations``) that form H exactly and
    from a sample of rows; where the run samples (``sample_size``), all but the last SAMPLED_RUN_EXACT_ITERATIONS."""
    iterations = newton_iterations(problem)
    if not sample_size(problem):
        return iterations, 0.0
    exact = min(iterations, SAMPLED_RUN_EXACT_ITERATIONS)
    return exact, iterations - exact


def logistic_start_gap(problem) -> float:
    """The logistic loss's duality gap at w = 0 with the driver's α(0) = −φ'(0) = y/2: P(0) = log 2 and
    D(y/2) = log 2 − ‖Xᵀy‖²/(8λn²) (each conjugate term is −log 2), so the gap is ‖Xᵀy‖²/(8λn²)."""
    return problem.data.xty_norm_sq / (8.0 * problem.lam * problem.n_samples ** 2)


def newton_iterations(problem) -> float:
    """Predicted Newton iterations of a whole solve: NEWTON_ITERATIONS[loss], or for the logistic loss the law of
    ITERATIONS_PER_DECADE's comment in the decades of ``logistic_start_gap`` above GAP_REFERENCE·log 2."""
    if problem.loss != "logistic":
        return float(NEWTON_ITERATIONS[problem.loss])
    decades = math.log10(max(logistic_start_gap(problem) / (GAP_REFERENCE * math.log(2.0)), 1.0))
    return max(MIN_ITERATIONS, ITERATIONS_PER_DECADE * decades + ITERATIONS_OFFSET)


def cg_products(problem) -> float:
    """Predicted Hessian-vector products of a whole solve on the CG path: the squared loss's measured power law
    CG_PRODUCTS_SCALE × κ^CG_PRODUCTS_EXPONENT, κ = 1 + λ̂/(γλ) (their comment), the logistic loss's
    ``newton_iterations`` × CG_PRODUCTS_PER_ITERATION × κ^CG_PRODUCTS_PER_ITERATION_EXPONENT (the smoothed hinge:
    the law below, for the whole solve); per Newton iteration at most the √κ_F law of CG's worst case (Nocedal &
    Wright 2006, eq. 5.36) fitted on plain CG, κ_F = 1 + ‖X‖_F²/(nγλ) bounding H's condition number (φ'' ≤ 1/γ,
    λ_max(XᵀX) ≤ ‖X‖_F²): CG_PRODUCTS_FLOOR + CG_PRODUCTS_PER_ROOT_KAPPA[loss] × √κ_F; and at most as many
    iterations as H has distinct eigenvalues (their Theorem 5.4), rank(X) + 1 ≤ min(n, d) + 1 (measured: ijcnn1,
    d = 22, squared at 0.01/n: 15 products; heart_scale, d = 13: 13)."""
    kappa = 1.0 + float(problem.frob_sq) / (problem.n_samples * problem.gamma * problem.lam)
    bound = CG_PRODUCTS_FLOOR + CG_PRODUCTS_PER_ROOT_KAPPA[problem.loss] * math.sqrt(kappa)
    steps = newton_iterations(problem)  # the squared loss's: 1, its one quadratic solve
    fitted = bound
    if problem.loss in CG_PRODUCTS_SCALE:
        fitted = CG_PRODUCTS_SCALE[problem.loss] * cg_kappa(problem) ** CG_PRODUCTS_EXPONENT[problem.loss]
    elif problem.loss == "logistic":
        fitted = steps * CG_PRODUCTS_PER_ITERATION * cg_kappa(problem) ** CG_PRODUCTS_PER_ITERATION_EXPONENT
    return min(fitted, steps * bound, steps * (min(problem.n_samples, problem.n_features) + 1))


def cg_kappa(problem) -> float:
    """The power law's κ = 1 + λ̂/(γλ), λ̂ = ``Data.gram_bulk_estimate`` (CG_PRODUCTS_SCALE's comment)."""
    return 1.0 + problem.data.gram_bulk_estimate / (problem.gamma * problem.lam)


def cg_iteration_ns(problem, products) -> float:
    """Predicted ns of a step of the CG path that runs ``products`` Hessian-vector products: 2 sweeps over X
    each, one more for ∇P unless the loss is squared (whose step is one CG iteration), each reading X's nonzeros
    (CG_NS_PER_NNZ, beyond the cache CG_NS_PER_NNZ_BEYOND_CACHE, on dense rows CG_NS_PER_DENSE_ENTRY an entry)
    and its rows (CG_NS_PER_ROW); the CG iterations' vector work on the nonempty columns (CG_NS_PER_COLUMN,
    the ∇P step counted as one); and a Newton step's line search (CG_NS_PER_LINE_EXAMPLE an example)."""
    newton_step = problem.loss != "squared"
    n = problem.n_samples
    sweep = sweep_ns(problem)
    vectors = CG_NS_PER_COLUMN * (products + newton_step) * problem.n_nonempty_columns
    return (2 * products + newton_step) * sweep + vectors + newton_step * CG_NS_PER_LINE_EXAMPLE * n


def sweep_ns(problem) -> float:
    """Predicted ns of one sweep over X on one thread, CG's cost model: X's nonzeros (CG_NS_PER_NNZ, beyond the
    cache CG_NS_PER_NNZ_BEYOND_CACHE, on dense rows CG_NS_PER_DENSE_ENTRY an entry) and its rows (CG_NS_PER_ROW)."""
    n = problem.n_samples
    if problem.data.is_dense:  # every entry of the dense rows is read, stored or not
        read = CG_NS_PER_DENSE_ENTRY * n * problem.n_features
    else:
        read = (CG_NS_PER_NNZ_BEYOND_CACHE if beyond_cache(problem) else CG_NS_PER_NNZ) * problem.nnz
    return read + CG_NS_PER_ROW * n


def dual_system(problem) -> bool:
    """Whether the squared loss's CG runs on its dual system (DUAL_CG_RATIO's comment): X has at least
    DUAL_CG_RATIO·n nonempty columns."""
    return problem.n_nonempty_columns >= DUAL_CG_RATIO * problem.n_samples


def product_rows(problem):
    """The dense rows the CG path's Hessian-vector products read: ``Data.X_dense_f32`` (X's dense rows rounded to
    float32) where X is kept dense and ``exceeds_cache``, else ``Data.X_dense`` (or None: the CSR arrays); the
    squared loss's CG on its dual system reads ``Data.X_dense``. Beyond the cache a product is memory-bound, and
    half the bytes made it 1.6×
    faster (dense 1e5 × 500, one thread, 37 → 23 ms; q within 3e-9 relative, Xv within 3e-8: an ad-hoc probe)
    and whole logistic calls 1.25–1.28× (benchmarks/hessian_f32_bench.py, the copy built before the timing; it
    is built once for a Problem, on its first such run: 71–92 ms there, against 81–172 ms saved by a whole
    call). The products round, and so do the gradient sweeps of the Newton steps that start from no checkpoint while
    the run is far from its tol (``NewtonState._gradient_rounds``: under a tol > 0, after a step from a gap above
    DUE_REACH·√(tol·P)): ∇P within ~1e-7 relative of each of its terms; the steps near the optimum take ∇P from X's
    float64 values (a checkpoint's sweep, ``certificate_sums``, or the gradient's own). The certificate reads X's
    float64 values, so the run is an inexact Newton method (CG solves a system within ~1e-7·‖H‖ of H) whose last
    steps have the exact gradient, converging to the same certified optimum. The gradient on the float32 rows,
    against X's float64 values (benchmarks/gradient_f32_bench.py: dense 1e5 × 500, logistic, whole calls to a
    certified relative gap 1e-6, interleaved pairs, float64 ÷ float32, at the same passes, P alike within 3e-14):
    1.14 at λ = 1/n (203 → 177 ms), 1.29 at 0.01/n (239 → 186 ms); n_jobs=2 1.09 and 1.13. XΔ, summed from the
    products' Xp, carries the rounding into the z the line search and the next gradient read, until the next
    checkpoint's sweep recomputes z = Xw; a line search that finds no decrease so switches the run to the float64
    rows (``NewtonState._newton_cg``). The squared loss's CG carries its residual across steps, so on rounded
    products it converges to the rounded system's solution, within ~1e-7·cond(H) of the true one: its due checkpoint
    certifies that point with X's float64 values, and where the certificate does not hold, the run goes on from
    there with the float64 rows, CG restarted from the true residual (``NewtonState.checkpointed``): iterative
    refinement (Moler 1967, "Iterative refinement in floating point", J. ACM 14(2)), the low precision's solve the
    first correction's. Dense 1e5 × 500 (benchmarks/hessian_f32_bench.py --losses squared: whole calls to a
    certified relative gap 1e-6, interleaved pairs, the copy built before the timing, no switch; float64 ÷ float32):
    1.52 at λ = 0.01/n (191 → 126 ms), 1.35 at 1/n (148 → 110 ms); n_jobs=2 1.47 and 1.43. Memory: 4 bytes an
    entry more."""
    data = problem.data
    if data.X_dense is not None and beyond_cache(problem) and not (problem.loss == "squared" and dual_system(problem)):
        return data.X_dense_f32
    return data.X_dense


def cg_serial_reason(problem, n_jobs) -> str:
    """Why the CG path's sweeps run on one thread with ``n_jobs`` threads given, or "" where they run over
    n_jobs row blocks (the n_jobs mode; CG_PARALLEL_MIN_NNZ's comment)."""
    if n_jobs <= 1:
        return "one thread given"
    if problem.loss == "squared" and dual_system(problem):
        return "newton's CG on the dual system runs on one thread"
    if problem.nnz < CG_PARALLEL_MIN_NNZ:
        return f"newton's CG path runs on one thread below {CG_PARALLEL_MIN_NNZ:,} nonzeros"
    return ""


def cg_handover(problem, solver="auto") -> float:
    """A Cholesky iteration's predicted ns in Hessian-vector products (``cholesky_iteration_ns`` over
    ``cg_iteration_ns`` of one product) where the run starts on CG and may hand over (HANDOVER_MIN_PRODUCTS'
    comment): the squared loss, ``solver`` "auto", d ≤ MAX_FEATURES, CG on the primal system (not
    ``dual_system``) and at least HANDOVER_MIN_PRODUCTS products, whichever inner solver the model predicts faster;
    else 0."""
    if (problem.loss != "squared" or solver != "auto" or problem.n_features > MAX_FEATURES
            or dual_system(problem)):
        return 0.0
    products = cholesky_iteration_ns(problem) / cg_iteration_ns(problem, 1)
    return products if products >= HANDOVER_MIN_PRODUCTS else 0.0


def cg_newton_iterations(problem) -> float:
    """Predicted steps of a whole solve on the CG path: Newton iterations (``newton_iterations``), or for the
    squared loss its CG iterations (``cg_products``)."""
    return cg_products(problem) if problem.loss == "squared" else newton_iterations(problem)


def solve_ns(problem, solver) -> float:
    """Predicted ns of Newton's whole solve with the inner ``solver`` ("cholesky" or "cg"), checkpoints left
    out: ``newton_iterations`` Cholesky iterations, or ``cg_newton_iterations`` steps sharing ``cg_products``."""
    if solver == "cholesky":
        exact, sampled = cholesky_iterations(problem)
        return exact * cholesky_iteration_ns(problem) + sampled * cholesky_iteration_ns(problem, sampled=True)
    steps = cg_newton_iterations(problem)
    return steps * cg_iteration_ns(problem, cg_products(problem) / steps)


def checkpoints_every_step(problem, solver) -> bool:
    """Whether a run of the inner ``solver`` checkpoints after every step under eval_every="auto": where a step
    is predicted to outweigh EVERY_STEP_RATIO checkpoints (else at the driver's geometric intervals)."""
    return typical_iteration_ns(problem, solver) >= EVERY_STEP_RATIO * checkpoint_ns(problem)


def solve_checkpoints(problem, solver) -> float:
    """Predicted checkpoints of a whole solve under eval_every="auto" and a tol > 0: the start's and the due
    steps' (DUE_CHECKPOINTS); the squared loss: on the CG path the start's and the last (SQUARED_DUE_FACTOR), on
    Cholesky's the start's and one per step where ``checkpoints_every_step``, else the driver's cadence
    (``costs.auto_checkpoints``) over the solve's passes, a step lasting 2 passes."""
    if problem.loss == "squared" and solver == "cg":
        return 2.0
    if solver == "cholesky":
        steps = newton_iterations(problem)
        passes = 2.0 * steps
    else:
        steps = cg_newton_iterations(problem)
        passes = 2.0 * cg_products(problem) + (0.0 if problem.loss == "squared" else steps) + 1.0
    if problem.loss != "squared":
        return min(steps, DUE_CHECKPOINTS) + 1.0
    if checkpoints_every_step(problem, solver):
        return steps + 1.0
    return auto_checkpoints(passes, passes / steps, auto_cap(problem))


def predicted_ns(problem, solver) -> float:
    """Predicted ns of a whole ``cdlab.solve`` call with the inner ``solver``: ``solve_ns`` and the
    checkpoints (``solve_checkpoints`` × ``checkpoint_ns``)."""
    return solve_ns(problem, solver) + solve_checkpoints(problem, solver) * checkpoint_ns(problem)


def inner_solver(problem, solver="auto") -> str:
    """The inner solver of a run: ``solver`` when it names one ("cholesky" or "cg"), else ("auto") CG where
    CG_MARGIN times its ``predicted_ns`` is below Cholesky's (CG_MARGIN < 1: CG is kept where predicted up to
    1/CG_MARGIN× slower) or d > MAX_FEATURES (the Hessian does not fit), Cholesky elsewhere and on the hinge."""
    check_choice("solver", solver, SOLVERS)
    if solver != "auto":
        return solver
    if problem.loss == "hinge":  # its smoothed stages run on Cholesky's path only (``_hinge_newton``)
        return "cholesky"
    if problem.n_features > MAX_FEATURES:
        return "cg"
    return "cg" if CG_MARGIN * predicted_ns(problem, "cg") < predicted_ns(problem, "cholesky") else "cholesky"


def typical_iteration_ns(problem, solver) -> float:
    """Predicted ns of one typical step of the inner ``solver`` ("cholesky" or "cg")."""
    if solver == "cholesky":
        return solve_ns(problem, "cholesky") / newton_iterations(problem)
    return solve_ns(problem, "cg") / cg_newton_iterations(problem)


def iteration_ns(problem, options=None) -> float:
    """Predicted ns of one step (``MethodSpec.step_ns``: a run cannot stop inside it) on one thread, for the
    inner solver ``options`` pick: a Cholesky iteration (where the run samples H, its most: a sampled H's step that
    gives way to the exact H's, ``NewtonState._sampled_step``), or on the CG path its most, MAX_CG_ITERATIONS
    Hessian-vector products (the squared loss: one)."""
    if problem.loss == "hinge":  # Cholesky's, every H exact by the sparse sweep (``_hinge_newton``), at its most
        return cholesky_iteration_ns(problem, sparse_gram=True)
    solver = inner_solver(problem, (options or {}).get("solver", "auto"))
    if solver == "cholesky":
        fallback = cholesky_iteration_ns(problem, sampled=True) if sample_size(problem) else 0.0
        return cholesky_iteration_ns(problem) + fallback
    return cg_iteration_ns(problem, 1 if problem.loss == "squared" else MAX_CG_ITERATIONS)


def features_refusal(problem, options=None) -> str:
    """Why Newton refuses ``problem`` with ``options`` (``MethodSpec.problem_rule``): solver="cholesky" on a d
    whose d × d Hessian (and its factor) would exceed MAX_FEATURES' memory ('' if it takes it; the CG path,
    O(n + d), takes any d), and on the hinge solver="cg" or d > MAX_FEATURES (its stages run on Cholesky's path
    only). Read from d alone, before anything is allocated; a ``solver`` that is none of SOLVERS raises."""
    solver = check_choice("solver", (options or {}).get("solver", "auto"), SOLVERS)
    d = problem.n_features
    if problem.loss == "hinge" and (solver == "cg" or d > MAX_FEATURES):
        return (f"method 'newton' on the hinge loss runs Newton on smoothed hinges by Cholesky (cdlab.solvers."
                f"_hinge_newton): it takes solver='auto' or 'cholesky' and at most {MAX_FEATURES} features (d = {d}, "
                f"solver={solver!r}); use method='sdca' (with shrinking=True), whose memory scales with the data")
    if d <= MAX_FEATURES or solver != "cholesky":
        return ""
    return (f"method 'newton' with solver='cholesky' forms the d × d Hessian and its Cholesky factor (2·d² "
            f"doubles): d = {d} features would need {2 * 8 * float(d) ** 2 / 2 ** 30:.3g} GiB; it takes at most "
            f"{MAX_FEATURES} features ({2 * 8 * MAX_FEATURES ** 2 / 2 ** 20:.0f} MiB). Use solver='cg' (memory "
            f"O(n + d), the default above {MAX_FEATURES} features), or a method whose memory scales with the data, "
            f"e.g. method='sdca'")


def jacobi_reads(problem):
    """What the CG kernels and ``jacobi_sweep`` read of X: its CSR arrays (``_kernels.row_arrays``: its values, or the
    one value they share), its nonempty columns and its dense rows (or None)."""
    return (*row_arrays(problem), nonempty_columns(problem), problem.data.X_dense)


@njit(inline="always", cache=True)
def _logistic_weights(yi, sg, sm, n):
    """The logistic loss's (φ'/n, φ''/n) from the pair (σ(t), σ(−t)) of ``losses.logistic_terms`` at t = −y z."""
    return -yi * sg / n, sm * sg / n


def loss_weights(code, z, y, s, deriv, curv):
    """deriv_i = φ'(z_i)/n and curv_i = φ''(z_i)/n: the gradient's and the Hessian's row weights (the
    logistic loss's both from one exp an example, ``losses.logistic_tails``)."""
    if code == L.LOGISTIC:
        t = -y * z
        _logistic_line(t, L.logistic_tails(t, with_log=False)[0], None, y, None, deriv, curv)
    else:
        _loss_weights(code, z, y, s, deriv, curv)


@njit(cache=True, nogil=True, error_model="numpy")
def _loss_weights(code, z, y, s, deriv, curv):
    """``loss_weights`` of a loss other than the logistic."""
    n = z.shape[0]
    for i in range(n):
        deriv[i] = L.loss_deriv(code, z[i], y[i], s) / n
        curv[i] = L.loss_curvature(code, z[i], y[i], s) / n


@njit(cache=True, nogil=True, error_model="numpy")
def gram_sweep(indptr, indices, data, deriv, curv, grad, H):
    """One row-order sweep over X: grad += Σ_i deriv_i x_i and the lower triangle of H +=
    Σ_i curv_i x_i x_iᵀ (CSR indices sorted, so q ≤ p in a row gives column j_q ≤ j_p)."""
    for i in range(indptr.shape[0] - 1):
        start, end = indptr[i], indptr[i + 1]
        g, c = deriv[i], curv[i]
        for p in range(start, end):
            jp, xp = indices[p], entry(data, p)
            grad[jp] += g * xp
            if c != 0.0:
                cx = c * xp
                for q in range(start, p + 1):
                    H[jp, indices[q]] += cx * entry(data, q)


@njit(cache=True, nogil=True, error_model="numpy")
def densify_rows(indptr, indices, data, lo, deriv, curv, grad, block):
    """Rows lo, lo + 1, … (as many as ``block`` has) into the dense ``block``, row i scaled by
    √curv_i (so blockᵀblock = Σ_i curv_i x_i x_iᵀ), and grad += Σ_i deriv_i x_i, in one read."""
    for r in range(block.shape[0]):
        i = lo + r
        g, c = deriv[i], math.sqrt(curv[i])
        for j in range(block.shape[1]):
            block[r, j] = 0.0
        for p in range(indptr[i], indptr[i + 1]):
            j, x = indices[p], entry(data, p)
            block[r, j] = c * x
            grad[j] += g * x


def line_point(code, z, u, y, s, t, deriv=None, curv=None):
    """(Σ_i φ(z_i + t u_i), Σ_i φ'(z_i + t u_i) u_i): the loss part of P and of its slope along
    the line, times n. O(n), no pass over X. Where ``deriv`` and ``curv`` are given, also ``loss_weights`` at
    z + t u, from the same exp: the next iteration's, should the line search accept t. The logistic loss's
    φ and φ' from one exp and one log1p an example (``losses.logistic_tails``)."""
    if code != L.LOGISTIC:
        return _line_point(code, z, u, y, s, t, deriv, curv)
    m = -y * (z + t * u)
    e, tail = L.logistic_tails(m)
    return _logistic_line(m, e, tail, y, u, deriv, curv)


@njit(cache=True, nogil=True, error_model="numpy")
def _logistic_line(m, e, tail, y, u, deriv, curv):
    """The logistic loss's (Σ_i φ_i, Σ_i φ'_i u_i) at the margins' t = m = −y z from ``losses.logistic_tails``' (e,
    tail) (the sums skipped where tail or u is None), and ``loss_weights`` into deriv and curv where given."""
    value = 0.0
    slope = 0.0
    n = m.shape[0]
    for i in range(n):
        phi, sg, sm = L.logistic_from_tail(m[i], e[i], 0.0 if tail is None else tail[i])
        if tail is not None:
            value += phi
            slope += -y[i] * sg * u[i]
        if deriv is not None:
            deriv[i], curv[i] = _logistic_weights(y[i], sg, sm, n)
    return value, slope


@njit(cache=True, nogil=True, error_model="numpy")
def _line_point(code, z, u, y, s, t, deriv=None, curv=None):
    """``line_point`` of a loss other than the logistic."""
    value = 0.0
    slope = 0.0
    n = z.shape[0]
    for i in range(n):
        zi = z[i] + t * u[i]
        value += L.loss_value(code, zi, y[i], s)
        di = L.loss_deriv(code, zi, y[i], s)
        slope += di * u[i]
        if deriv is not None:
            deriv[i] = di / n
            curv[i] = L.loss_curvature(code, zi, y[i], s) / n
    return value, slope


class NewtonState(State):
    """Damped Newton (module docstring). ``solver``: how each iteration solves the Newton system,
    "cholesky", "cg" or "auto" (``inner_solver``); ``n_jobs``: the threads BLAS and LAPACK may use on the
    Cholesky path, and the CG path's row blocks (module docstring); ``sparse_gram``: on the Cholesky path every H
    exact by the sparse sweep, which skips the rows off the loss's curved piece (``_hinge_newton``'s stages)."""

    def __init__(self, problem, sampling, rng, solver="auto", n_jobs=1, sparse_gram=False):
        refusal = features_refusal(problem, {"solver": solver})  # before anything of size d² exists
        if refusal:
            raise ValueError(refusal)
        super().__init__(problem, rng)
        self.sparse_gram = sparse_gram  # the Cholesky path: every H exact, by gram_sweep (``_cholesky_arrays``)
        n, d = problem.n_samples, problem.n_features
        # the squared loss may start on CG and hand over to Cholesky (HANDOVER_MIN_PRODUCTS' comment): a
        # Cholesky iteration's cost in products, or 0 where the run does not hand over
        self.handover_products = cg_handover(problem, solver)
        self.solver = "cg" if self.handover_products else inner_solver(problem, solver)
        self.starts_on_cg = self.solver == "cg"
        self.n_jobs = n_jobs
        # once quadratic convergence sets in, the gap drops by orders per iteration: checkpoint after each
        # one when an iteration outweighs EVERY_STEP_RATIO checkpoints (a State's checkpoints_when_due), or
        # after each due one when the run has a tol (``checkpointed``)
        self.checkpoints_when_due = checkpoints_every_step(problem, self.solver)
        self.w = np.zeros(d)
        self.z = np.zeros(n)  # Xw, carried along the line searches (no pass over X to refresh it)
        self.u = np.zeros(n)  # XΔ of the last iteration
        self.deriv, self.curv = np.empty(n), np.empty(n)
        self.grad = np.empty(d)
        # the squared loss on the CG path runs CG on its dual system (``_dual_cg``) where X has at least
        # DUAL_CG_RATIO·n nonempty columns
        self.dual_space = problem.loss == "squared" and self.solver == "cg" and dual_system(problem)
        if self.solver == "cholesky":
            self._cholesky_arrays()
        elif self.dual_space:  # CG on the dual system (``_dual_cg``): n-long vectors, and u = Xᵀp/(λn)
            self.alpha = np.zeros(n)
            self.r, self.p_dir, self.q, self.s = np.zeros(n), np.zeros(n), np.zeros(n), np.zeros(n)
            self.xt_p = np.zeros(d)
            self.minv = dual_preconditioner(problem.row_norms_sq, problem.lam * n)
        else:  # CG's vectors: O(n + d)
            self.step, self.r, self.p_dir, self.q = np.zeros(d), np.zeros(d), np.zeros(d), np.zeros(d)
            self.minv, self.s = np.zeros(d), np.zeros(d)  # the preconditioner's M⁻¹ and M⁻¹r
            self.xp = np.zeros(n)
        self.bounds = self.scratch = None  # the n_jobs mode's row blocks and their sums (the CG path's)
        if self.solver == "cg":
            self.sweep = jacobi_reads(problem)
            self.product_dense = product_rows(problem)  # the dense rows the CG path's products read (or None)
            # the n_jobs mode: the sweeps run over n_jobs row blocks (their bounds), one per thread, each
            # summing its own length-d vectors in ``scratch`` (2·n_jobs·d doubles); None: the serial kernels
            if not cg_serial_reason(problem, n_jobs):
                self.bounds = row_blocks(problem.X.indptr, n_jobs)
                self.scratch = np.zeros((2, n_jobs, d))
            self.rz = None  # the squared loss's carried CG: r·M⁻¹r (None before the first iteration)
            # the read of CG's (re)start not yet counted: counted with the next step's (``_cg_start_sums``)
            self.start_reads = 0
            self.fresh = False  # whether grad, minv and curv are at w already (``certificate_sums``)
            self.fresh_read = True  # ... read from X by that sweep (False: from data facts, ``_sums_at_zero``)
            self.cg_iterations = []  # CG iterations of each Newton iteration (the squared loss: none)
            # the forcing term's γ (FORCING_GAMMA), and the ‖∇P‖ and η of the iteration that moved w to here
            # (0: none yet)
            self.forcing_gamma = FORCING_GAMMA.get(problem.loss, 0.0)
            self.last_grad_norm, self.last_forcing = 0.0, 0.0
        self.value = line_point(problem.loss_code, self.z, self.z, problem.y, problem.s, 0.0)[0] / n  # P(0)
        # the Cholesky path's iteration reads X twice; the CG path's count varies and is measured (``_count``)
        self.steps_per_pass = 1 if self.solver == "cholesky" else 0.5
        self.last_step = None  # t of the last iteration (None before the first)
        self.start_gap = None  # the gap at the iterate the last step started from (``certificate_due``)
        self.cg_floor = 0.0  # CG's stopping residual from the run's tol (``checkpointed``)
        self.checkpoint_steps = 0  # steps at the last checkpoint (``certificate_due``'s guard)
        self.due_spacing = 1  # the squared loss's CG: least steps between due checkpoints (``checkpointed``)
        self.tol = 0.0  # the run's tol (``checkpointed``; 0, a run to its budget, before the first checkpoint)
        self.product_gaps = []  # the carried gap after each product since CG (re)started, while it may hand over
        self.hessian_fresh = False  # whether grad and H are at w already (the Cholesky path's ``_cholesky_start``)
        self.weights_at_z = False  # whether deriv and curv are at z already (an accepted line search's)

    def _cholesky_arrays(self):
        """H, its factor, and on the dense path a block of rows: 2·d² + BLOCK_ROWS·d doubles at most."""
        p = self.p
        d = p.n_features
        # sparse_gram: the rows off the loss's curved piece skipped (gram_sweep), none sampled (the smoothed hinge's
        # stages in ``_hinge_newton``, whose few curved rows BLAS over every dense row or a sample would waste or miss)
        self.dense = dense_rows(p) and not self.sparse_gram
        self.H = np.zeros((d, d), order="F")
        self.factor = np.zeros((d, d), order="F")
        self.block = np.empty((min(BLOCK_ROWS, p.n_samples), d)) if self.dense else None  # the dense path's rows
        # the rows of a sampled H (``_sampled_hessian``), or 0: every H exact, formed with ∇P in one read
        self.sample_size = 0 if self.sparse_gram else sample_size(p)
        if self.sample_size:
            self.sweep = jacobi_reads(p)
            self.minv = np.zeros(d)  # 1/diag(H), exact, from the gradient's sweep
            self.all_rows = np.arange(p.n_samples)
            self.sampling = True  # until a step forms the exact H (``_sampled_step``)
            self.sampled_from = None  # the gap the last step started from, if its H was sampled
            self.sampled_steps = 0  # the steps that took a sampled H's Δ
            self.fresh = False  # whether grad, minv and curv are at w already (``certificate_sums``)
            self.fresh_read = True  # ... read from X by that sweep (False: from data facts, ``_sums_at_zero``)
            if self.rng is None:
                self.rng = np.random.default_rng(0)

    def run(self, n_steps):
        if self.solver == "cg":
            if self.carries_residual:
                n_steps -= self._conjugate_gradients(n_steps)
            else:
                self._newton_cg(n_steps)
                n_steps = 0
        if n_steps > 0:  # Cholesky's iterations, from the start or after CG handed over
            self._cholesky_steps(n_steps)
        if self.starts_on_cg or self.solver == "cholesky" and self.sample_size:  # steps per pass vary: measured
            self.steps_per_pass = self.steps / self.data_passes

    def restart_on(self, problem):
        """The run goes on from its w and z on ``problem``, the same data and λ with another loss parameter (the
        smoothed hinge's s: ``_hinge_newton``): P at z, and nothing computed at the old one reused."""
        self.p = problem
        self.value = self._primal_from_z()
        self.weights_at_z = self.hessian_fresh = self.fresh = False
        self.start_gap = None

    def _cholesky_steps(self, n_steps):
        """``n_steps`` Newton iterations solving the system by Cholesky (2 passes each; where the run may sample H,
        ``_sampled_step``'s reads)."""
        p = self.p
        for _ in range(n_steps):
            if self.sample_size and self.sampling:
                touched, step, t = self._sampled_step()
            else:
                with self._blas_threads():
                    if not self.hessian_fresh:
                        self._gradient_and_hessian()
                    self.hessian_fresh = False
                    self._start_gap()
                    step = self._newton_direction()
                self.u = self._along(step)
                touched, t = 2 * p.nnz, 1.0
            self._count(touched)
            self.steps += 1
            self._line_search(step, t)

    def _along(self, step):
        """u = XΔ, as the kernels read X (``_kernels.row_margins`` on ``row_arrays``: the one value of one-value
        rows, full rows as dense ones)."""
        u = np.empty(self.p.n_samples)
        row_margins(*row_arrays(self.p), step, u, full_rows(self.p))
        return u

    def _gradient_and_hessian(self):
        """grad = ∇P(w) and the lower triangle of H − λI, in one read of X."""
        p = self.p
        self._loss_weights()
        self.grad[:] = 0.0
        self.H[...] = 0.0
        if not self.dense:
            gram_sweep(*row_arrays(p), self.deriv, self.curv, self.grad, self.H)
        else:
            from scipy.linalg.blas import dsyrk

            for lo in range(0, p.n_samples, BLOCK_ROWS):
                block = self.block[:min(BLOCK_ROWS, p.n_samples - lo)]
                densify_rows(*row_arrays(p), lo, self.deriv, self.curv, self.grad, block)
                dsyrk(1.0, block.T, beta=1.0, c=self.H, trans=0, lower=1, overwrite_c=1)
        self.grad += p.lam * self.w

    def _sampled_step(self):
        """A step while the run samples H (``_sampled_hessian``): ∇P and diag(H) by one sweep (unless a
        checkpoint's gave them: ``fresh``); H from a sample of rows while the step cannot reach the run's tol
        (SAMPLE_REACH) and each sampled step has cut the gap SAMPLE_PROGRESS-fold, else exact, and the sampling
        ends (the steps after it form ∇P and H in one read, as a run that never samples); then Δ and u = XΔ. A
        sampled Δ along which the exact curvature ΔᵀHΔ = Σ_i curv_i u_i² + λ‖Δ‖² exceeds the sampled model's
        ΔᵀH_SΔ = −∇P·Δ more than SAMPLE_CURVATURE_RATIO-fold gives way to the exact H's (the sampling ends); else
        the line search starts from t = min(1, ΔᵀH_SΔ/ΔᵀHΔ), the minimiser along Δ of the model with the exact
        curvature. Returns (the nonzeros read, Δ, the first t)."""
        p = self.p
        touched = 0
        if not self.fresh:
            self._loss_weights()
            touched += jacobi_sweep(*self.sweep, self.deriv, self.curv, p.lam, self.w, self.grad, self.minv, None,
                                    None)
        self.fresh = False
        self._start_gap()
        progress = self.sampled_from is None or self.start_gap <= self.sampled_from / SAMPLE_PROGRESS
        self.sampling = progress and self.tol > 0.0 and not self._start_reaches(self.tol, SAMPLE_REACH)
        for sampled in (True, False) if self.sampling else (False,):
            with self._blas_threads():
                touched += self._form_hessian(sampled)
                step = self._newton_direction()
            self.u = self._along(step)
            touched += p.nnz
            self.sampled_from = self.start_gap if sampled else None
            if not sampled:
                return touched, step, 1.0
            model = -dense_dot(self.grad, step)
            exact = curvature_along(self.curv, self.u) + p.lam * dense_dot(step, step)
            if not model > 0.0:  # no descent at rounding: the line search leaves w
                return touched, step, 1.0
            if exact <= SAMPLE_CURVATURE_RATIO * model:
                self.sampled_steps += 1
                return touched, step, min(1.0, model / exact)
            self.sampling = False

    def _form_hessian(self, sampled):
        """The lower triangle of H − λI from every row, or ``sampled``: from ``sample_size`` rows drawn by the run's
        rng, each weighted n/m, its diagonal raised to the exact one (``_sampled_hessian``). Returns the nonzeros
        read."""
        p = self.p
        rows, weight = self.all_rows, 1.0
        if sampled:
            rows = np.sort(self.rng.choice(p.n_samples, self.sample_size, replace=False))
            weight = p.n_samples / self.sample_size
        self.H[...] = 0.0
        touched = 0
        if self.dense:
            from scipy.linalg.blas import dsyrk

            for lo in range(0, rows.shape[0], BLOCK_ROWS):
                block = self.block[:min(BLOCK_ROWS, rows.shape[0] - lo)]
                touched += densify_sampled(*row_arrays(p), rows, lo, weight, self.curv, block)
                dsyrk(1.0, block.T, beta=1.0, c=self.H, trans=0, lower=1, overwrite_c=1)
        else:
            touched = gram_rows(*row_arrays(p), rows, weight, self.curv, self.H)
        if sampled:
            raise_diagonal(self.H, self.minv, p.lam)
        return touched

    def _newton_direction(self):
        """Δ = −(H + shift·I)⁻¹ ∇P by Cholesky, shift = λ; when rounding leaves H + λI not positive
        definite (λ below the precision of H's diagonal, collinear features), the shift grows from
        SHIFT_FLOOR × max H_jj by 10× until the factorisation succeeds (Nocedal & Wright 2006, §3.4,
        "Cholesky with added multiple of the identity"): any positive definite system gives a
        descent direction, and the line search keeps the method convergent."""
        from scipy.linalg import LinAlgError, cho_factor, cho_solve  # here: scipy.linalg's import is slow

        p = self.p
        diagonal = self.factor.reshape(-1, order="F")[::p.n_features + 1]  # a view of factor's diagonal
        extra, scale = 0.0, float(np.max(np.diag(self.H), initial=0.0))
        for _ in range(MAX_SHIFTS):
            self.factor[...] = self.H
            diagonal += p.lam + extra
            try:
                factor = cho_factor(self.factor, lower=True, overwrite_a=True, check_finite=False)
            except LinAlgError:
                extra = max(10.0 * extra, SHIFT_FLOOR * scale, np.finfo(float).tiny)
                continue
            return -cho_solve(factor, self.grad, check_finite=False)
        raise ValueError(f"method 'newton': H + shift·I is not positive definite even at shift {extra:.3g}: "
                         f"the Hessian is not finite (rows too large to square in floating point?)")

    def _line_search(self, step, t=1.0):
        """w ← w + tΔ, t = ``t``, ½t, … until sufficient decrease (module docstring); z ← z + t u, and deriv and curv
        at the new z from the accepted trial's exps (``weights_at_z``: the next iteration computes no
        ``loss_weights``)."""
        p = self.p
        n, lam = p.n_samples, p.lam
        slope0 = dense_dot(self.grad, step)
        self.last_step = 0.0
        self.weights_at_z = False  # its trials write deriv and curv at their points (LINE_SEARCH_WEIGHTS)
        if not slope0 < 0.0:  # no descent left at rounding: w stays
            return
        w_step, step_step = dense_dot(self.w, step), dense_dot(step, step)
        # the smoothed hinge's h' is piecewise linear: from its root (where the search finds a t > 0), then halvings
        # should rounding need them
        if p.loss_code == L.SMOOTHED_HINGE and EXACT_LINE_SEARCH:
            t = smoothed_hinge_line_min(self.z, self.u, p.y, p.s, n * lam, w_step, step_step, t)[0] or t
        for _ in range(MAX_TRIALS):
            loss, loss_slope = (line_point(p.loss_code, self.z, self.u, p.y, p.s, t, self.deriv, self.curv)
                                if LINE_SEARCH_WEIGHTS else line_point(p.loss_code, self.z, self.u, p.y, p.s, t))
            w_new = self.w + t * step
            value = loss / n + 0.5 * lam * dense_dot(w_new, w_new)
            slope = loss_slope / n + lam * (w_step + t * step_step)
            if value <= self.value + ARMIJO * t * slope0 or slope <= ARMIJO * slope0:
                self.w = w_new
                self.z += t * self.u
                self.value = value
                self.last_step = t
                self.weights_at_z = LINE_SEARCH_WEIGHTS
                return
            t *= 0.5

    def _loss_weights(self):
        """deriv and curv at the carried z (``loss_weights``), unless the line search that moved z left them there."""
        if not self.weights_at_z:
            p = self.p
            loss_weights(p.loss_code, self.z, p.y, p.s, self.deriv, self.curv)

    def _start_gap(self):
        """G(w) = ‖∇P(w)‖²/(2λ) at the step's start (DUE_REACH's comment), from the gradient it computed."""
        self.start_gap = dense_dot(self.grad, self.grad) / (2.0 * self.p.lam)

    def certificate_due(self, tol) -> bool:
        """Whether the last step may have reached the gap ``tol``: unless it started from a gap above
        DUE_REACH·√(tol·P) (its comment); the squared loss: on the CG path when the carried residual's gap is
        within SQUARED_DUE_FACTOR·tol or the guard's steps have passed (their comment), on Cholesky's after its
        first step (which lands on the optimum; not right after CG handed over); always where tol ≤ 0."""
        if tol <= 0.0:
            return True
        if self.carries_residual:
            guard = DUE_GUARD_RATIO * self.checkpoint_steps + DUE_GUARD_STEPS
            spaced = self.steps - self.checkpoint_steps >= self.due_spacing
            return (spaced and self._carried_gap() <= SQUARED_DUE_FACTOR * tol) or self.steps >= guard
        if self.p.loss == "squared":  # on Cholesky's path once it has taken a step (not at a handover: a CG step)
            return self.last_step is not None
        return self.start_gap is None or self._start_reaches(tol)

    def _start_reaches(self, tol, reach=DUE_REACH) -> bool:
        """Whether the last step started from a gap at most reach·√(tol·P) (DUE_REACH: from where it may reach
        ``tol``)."""
        return self.start_gap <= reach * math.sqrt(tol * max(abs(self.value), tol))

    def checkpointed(self, row, tol, margins=None):
        """CG needs no residual below CG_GAP_SHARE·√(2λ·tol) (CG_GAP_SHARE's comment); a run with a tol > 0
        checkpoints after every due step unless its loss is squared on Cholesky's path (EVERY_STEP_RATIO's
        comment); the squared loss's CG: a certified gap above tol where the carried one was within it switches a
        run on rounded rows to X's float64 rows, CG restarted from the true residual (``product_rows``), else doubles
        ``due_spacing`` (SQUARED_DUE_FACTOR's comment); a run without a tol > 0 reads the float64 rows throughout.
        The next line search starts from the checkpoint's P(w), the certified one at this w, in place of the value its
        last trial summed along the carried z (the same up to rounding)."""
        self.value = row["primal"]
        self.cg_floor = CG_GAP_SHARE * math.sqrt(2.0 * self.p.lam * max(tol, 0.0))
        self.tol = tol
        self.checkpoint_steps = self.steps
        if tol <= 0.0 and self.carries_residual:  # a run to its budget: no certificate to refine against
            self.product_dense = self.sweep[-1]
        if tol > 0.0 and (self.p.loss != "squared" or self.carries_residual):
            self.checkpoints_when_due = True
        if (tol > 0.0 and self.carries_residual and self.steps > 0 and row["gap"] > tol
                and self._carried_gap() <= SQUARED_DUE_FACTOR * tol):
            if self.product_dense is not self.sweep[-1]:
                # the restart's residual from the exact Xw (the checkpoint's), not the one summed from rounded Xp
                self.product_dense, self.rz = self.sweep[-1], None
                if margins is not None:
                    self.z[:] = margins
                else:
                    self.z[:] = self.p.margins(self.w)
                    self._count(self.p.nnz)
            else:
                self.due_spacing *= 2

    @property
    def carries_residual(self) -> bool:
        """Whether the run carries CG's residual from step to step (r = −∇P(w), or on the dual system y − α − Xw):
        the squared loss on the CG path."""
        return self.p.loss == "squared" and self.solver == "cg"

    def _carried_gap(self):
        """The gap from the squared loss's carried CG residual r (SQUARED_DUE_FACTOR's comment): ‖r‖²/(2λ), or in
        the dual system ‖r‖²/(2n) (``_dual_cg``'s docstring)."""
        scale = self.p.n_samples if self.dual_space else self.p.lam
        return dense_dot(self.r, self.r) / (2.0 * scale)

    def _blas_threads(self):
        """The context the Cholesky path's BLAS and LAPACK calls run in (``_threads.blas_threads``)."""
        return blas_threads(self.n_jobs)

    def _sweep_threads(self):
        """The context the CG path's sweeps run in: ``parallel_section`` on n_jobs threads in the n_jobs mode."""
        return parallel_section(self.n_jobs) if self.bounds is not None else contextlib.nullcontext()

    def _count(self, touched):
        self.nnz_touched += int(touched)
        self.data_passes += touched / self.p.nnz

    def _newton_cg(self, n_steps):
        """Newton iterations whose direction is CG's (``_newton_cg.newton_cg_direction``): one sweep for ∇P,
        two per Hessian-vector product (at most MAX_CG_ITERATIONS), none for XΔ (summed along the way); the
        first one after a checkpoint takes ∇P from the checkpoint's sweep (``certificate_sums``)."""
        p = self.p
        for _ in range(n_steps):
            if not self.fresh:
                self._loss_weights()
            gradient_rows = self.product_dense if self._gradient_rounds() else self.sweep[-1]
            with self._sweep_threads():
                iterations, touched, grad_norm, forcing = newton_cg_direction(
                    *self.sweep[:-1], gradient_rows, self.product_dense, self.deriv, self.curv, p.lam, self.w,
                    MAX_CG_ITERATIONS, self.cg_floor, self.grad, self.step, self.u, self.r, self.p_dir, self.q,
                    self.xp, self.minv, self.s, self.fresh, self.bounds, self.scratch, self.forcing_gamma,
                    self.last_grad_norm, self.last_forcing)
            if self.fresh and not self.fresh_read:  # ∇P from data facts already computed (``_sums_at_zero``)
                touched -= p.nnz
            self.fresh = False
            self._start_gap()
            self.cg_iterations.append(int(iterations))
            self._count(touched)
            self.steps += 1
            self._line_search(self.step.copy())
            if self.last_step != 0.0:  # w moved: the next η takes this iteration's ‖∇P‖ and η
                self.last_grad_norm, self.last_forcing = grad_norm, forcing
            elif self.product_dense is not self.sweep[-1]:
                # no decrease found (w, and the next η's ratio, stay as they were) along a step whose XΔ was summed
                # from float32 rows: float64 from here on
                self.product_dense = self.sweep[-1]

    def _gradient_rounds(self) -> bool:
        """Whether the next Newton–CG step's gradient sweep reads the products' rows (GRADIENT_ON_PRODUCT_ROWS;
        ``product_rows``' docstring): only under a tol > 0 and after a step that started far from it, from a gap
        above DUE_REACH·√(tol·P) (or before the first step), so that the steps near the optimum, checkpointed or not
        (a fixed eval_every), take ∇P from X's float64 values and the run converges to the optimum of X, not of
        its rounding."""
        if not GRADIENT_ON_PRODUCT_ROWS or self.tol <= 0.0:
            return False
        return self.start_gap is None or not self._start_reaches(self.tol)

    def _conjugate_gradients(self, n_steps):
        """The squared loss: up to ``n_steps`` iterations of CG carried across calls, on its normal equations
        (``_newton_cg.cg_steps``) or where ``dual_space`` on its dual system (``_dual_cg``); it (re)starts from the
        true residual (``_restart_cg``) at the first call (unless the start's checkpoint started it:
        ``_cg_start_sums``) and wherever it stops short (r = 0, or pᵀAp ≤ 0 by
        rounding), a restart counting as a step (so a run always advances). While it may hand over to Cholesky
        (``handover_products``) it runs one product at a time and stops where ``_hands_over``. Returns the steps
        run."""
        p = self.p
        done = 0
        while done < n_steps and self.solver == "cg":
            if self.rz is None:
                self.start_reads += self._restart_cg()
            wanted = 1 if self.handover_products else n_steps - done
            if self.dual_space:
                moved, self.rz, touched = dual_cg_steps(
                    *self.sweep, p.lam * p.n_samples, self.minv, wanted, self.alpha, self.w, self.z, self.r,
                    self.p_dir, self.q, self.xt_p, self.s, self.rz)
            else:
                with self._sweep_threads():
                    moved, self.rz, touched = cg_steps(*self.sweep[:-1], self.product_dense, self.curv, p.lam,
                                                       self.minv, wanted, self.w,
                                                       self.z, self.r, self.p_dir, self.q, self.xp, self.s, self.rz,
                                                       self.bounds, self.scratch)
            self._count(touched + self.start_reads)  # a (re)start's read with the step's
            self.start_reads = 0
            done += moved
            if self.handover_products and moved:
                self.product_gaps.append(self._carried_gap())
                if self._hands_over():
                    self._to_cholesky()
            if moved < wanted:  # stopped short: restart, a step
                self.rz = None
                done += 1
        self.steps += done
        self.value = self._primal_from_z()
        return done

    def _primal_from_z(self):
        """P(w) from the carried z = Xw: O(n + d), no pass over X."""
        p = self.p
        return (line_point(p.loss_code, self.z, self.z, p.y, p.s, 0.0)[0] / p.n_samples
                + 0.5 * p.lam * dense_dot(self.w, self.w))

    def _hands_over(self) -> bool:
        """Whether CG should hand over to Cholesky (HANDOVER_MIN_PRODUCTS' comment), judged from the second
        product on: unless the carried gap is within the run's tol (the next checkpoint may end the run), once
        CG has run ``handover_products`` products, or once the products still needed to reach tol exceed them at
        the contraction per product of the last half of those since the first, (g_k/g_m)^(1/(k−m)) after k
        products, m = max(1, ⌊k/2⌋): the first products are the fastest (the spectrum's outlier,
        CG_PRODUCTS_SCALE's comment; rotated cond 1e3: 0.21 at the second, ~0.6 over the 8th–16th), so the
        recent rate is what the rest will see. CG does not make ‖r‖ monotone, so the rate is read only over a
        window where the gap fell at every product: a geometric model fits there. Over a window where it rose
        (CG resolving a cluster of eigenvalues, often just before a steep fall) the ski-rental cap alone
        decides. Measured (benchmarks/handover_bench.py: whole calls to a certified relative gap 1e-6, auto ÷ the
        faster inner solver alone, before → after): madelon λ = 0.01/n, gaps after products 1–7 1.4e3 0.19 0.24
        0.11 0.25 0.12 0.025 … to tol at the 15th, 3.39 → 1.05 (handed over after the 6th, its window 0.24 … 0.12);
        a rank-20 5000 × 500 plus noise 1.96 → 1.02 and 1.81 → 1.03 (λ = 1/n, 0.01/n); the rotated rows of
        HANDOVER_MIN_PRODUCTS' comment unchanged, 1.07–1.18 → 1.10–1.21; madelon λ = 0.001/n 1.45 → 1.9–2.1 (CG
        alone takes 44 products, the cap 42: the cap's bound, about 2×, is what a rule blind to what comes next
        can promise). A run without a tol > 0 (which CG cannot reach) hands over at its second product."""
        gaps = self.product_gaps
        k = len(gaps)
        if k < 2:
            return False
        if self.tol <= 0.0:
            return True
        target = SQUARED_DUE_FACTOR * self.tol
        if gaps[-1] <= target:
            return False
        if k >= self.handover_products:
            return True
        m = max(1, k // 2)
        window = gaps[m - 1:]
        if not (0.0 < gaps[-1] and gaps[m - 1] < math.inf and all(b < a for a, b in zip(window, window[1:]))):
            return False
        rate = (gaps[-1] / gaps[m - 1]) ** (1.0 / (k - m))
        return math.log(gaps[-1] / target) > self.handover_products * -math.log(rate)

    def _to_cholesky(self):
        """The switch to Cholesky's path: its arrays (d ≤ MAX_FEATURES, as ``inner_solver`` picked it), and its
        checkpoint rule (after every step where the run has a tol, else ``checkpoints_every_step``)."""
        self.solver = "cholesky"
        self.bounds = self.scratch = None
        self._cholesky_arrays()
        self.checkpoints_when_due = self.tol > 0.0 or checkpoints_every_step(self.p, "cholesky")

    def _restart_cg(self):
        """CG's (re)start: r and M⁻¹ (``_start_cg``), then ``_first_direction``; returns the nonzeros of X it read
        (the caller counts them)."""
        read = self._start_cg()
        self._first_direction()
        return read

    def _first_direction(self):
        """From r and M⁻¹: CG's first direction p = M⁻¹r and rz = r·M⁻¹r."""
        np.multiply(self.minv, self.r, out=self.s)
        self.p_dir[:] = self.s
        self.rz = dense_dot(self.r, self.s)
        self.product_gaps = []

    def _cg_start_sums(self):
        """The start's checkpoint sums at w = 0 from data facts (``_sums_at_zero``: z = 0, α = −φ'(0) = y and
        Xᵀα = Xᵀy, with r = −∇P = Xᵀα/n and M⁻¹ for the first product: no read of X once the data has Xᵀy), or where
        SUMS_AT_ZERO is off from the sweep that starts CG (``_restart_cg``: Xᵀα = −n∇P = n·r); either way at most
        one read where the driver's checkpoint and CG's start read X once each, as the Cholesky path's start
        (``_cholesky_start``)."""
        p = self.p
        sums = self._sums_at_zero() if SUMS_AT_ZERO else None
        if sums is None:
            self.start_reads = self._restart_cg()  # counted with the first step's, as the other fused starts count
            return L.neg_deriv(p.loss_code, self.z, p.y, p.s), self.z, self.r * float(p.n_samples)
        alpha, xt_alpha, self.start_reads = sums  # counted with the first step's, as the sweep's would be
        np.multiply(xt_alpha, 1.0 / p.n_samples, out=self.r)
        np.negative(self.r, out=self.grad)
        self._first_direction()
        return alpha, self.z, xt_alpha

    def _start_cg(self):
        """r and M⁻¹ from the current iterate: r = −∇P(w) and M = diag(H) by one sweep (``jacobi``), or on the
        dual system r = y − α − Xw from w = Xᵀα/(λn), two sweeps, none from α = 0 (its M⁻¹ is fixed:
        ``dual_preconditioner``). Returns the nonzeros of X read."""
        p = self.p
        if self.dual_space:
            read = 0
            if self.alpha.any():  # from α = 0, w = Xw = 0 without a pass
                self.w[:] = p.X.T @ self.alpha / (p.lam * p.n_samples)
                self.z[:] = p.margins(self.w)
                read = 2 * p.nnz
            np.subtract(p.y, self.alpha, out=self.r)
            self.r -= self.z
            return read
        loss_weights(p.loss_code, self.z, p.y, p.s, self.deriv, self.curv)
        with self._sweep_threads():
            read = jacobi_sweep(*self.sweep, self.deriv, self.curv, p.lam, self.w, self.grad, self.minv, self.bounds,
                                self.scratch)
        np.negative(self.grad, out=self.r)
        return read

    def certificate_sums(self):
        """On the Newton–CG path (a loss other than the squared): the checkpoint's z = Xw, α = −φ'(z) and Xᵀα
        in the sweep that also gives the next iteration its ∇P = λw − Xᵀα/n and preconditioner
        (``_newton_cg.certified_jacobi_sweep``): one read of X for both, where the checkpoint and the iteration read
        it once each; z replaces the carried Xw (summed along the line searches) by the exact one. The same on the
        Cholesky path while the run samples H (``_sampled_step``: ∇P and diag(H)); else there at the start only:
        ``_cholesky_start``; the squared loss's CG at the start only, with CG's first residual
        (``_cg_start_sums``). At w = 0 from data facts where the loss allows (``_sums_at_zero``)."""
        p = self.p
        if self.solver == "cholesky" and not (self.sample_size and self.sampling):
            start = CHOLESKY_START_FUSED and self.steps == 0 and not self.w.any()
            return self._cholesky_start() if start else None
        if self.carries_residual:
            start = CG_START_FUSED and not self.dual_space and self.rz is None and self.steps == 0 and not self.w.any()
            return self._cg_start_sums() if start else None
        n = p.n_samples
        at_zero = not self.w.any()
        sums = self._sums_at_zero() if at_zero and SUMS_AT_ZERO else None
        self.fresh_read = sums is None or sums[2] > 0
        if sums is None:
            alpha, xt_alpha = np.empty(n), np.zeros(p.n_features)
            self.minv[:] = 0.0
            with self._sweep_threads():
                certified_jacobi_sweep(*row_arrays(p), p.y, p.loss_code, p.s, self.w, at_zero, self.z, alpha,
                                       xt_alpha, self.curv, self.minv, full_rows(p), self.bounds, self.scratch)
            self.minv += p.lam
            np.reciprocal(self.minv, out=self.minv)
        else:
            alpha, xt_alpha, _ = sums
        self.weights_at_z = False  # z is the exact Xw now, curv is at it and deriv may not be
        np.multiply(xt_alpha, -1.0 / n, out=self.grad)
        self.grad += p.lam * self.w
        self.fresh = True
        return alpha, self.z, xt_alpha  # the driver reads z before the next step moves it

    def _sums_at_zero(self):
        """At w = 0, (α, Xᵀα, the nonzeros of X read) of the checkpoint, with the next step's M⁻¹ = 1/diag(H) (in
        minv), deriv and curv, from data facts, where α(0) = −φ'(0) is k·y for one k and φ''(0) one constant c (the
        logistic loss: k = ½, c = ¼; the squared loss: k = 1, c = 1; the smoothed hinge: k = c = min(1, 1/s)): z = 0,
        Xᵀα = k·Xᵀy (``Data.xty``, summed in X's storage order as the serial sweep sums Xᵀα, so bit for bit that
        sweep's where k is a power of 2) and diag(H) − λ = c·‖f_j‖²/n (``Data.col_norms_sq``; the sweep's
        Σ_i c x_ij²/n up to rounding: only the preconditioner reads it). Xᵀy is a fact of the data, computed once for
        a Data: by the cost model that picks the logistic loss's inner solver (``logistic_start_gap``), else here,
        one read of X counted as this start's (nnz), as the sweep it replaces would be; later runs on the same data
        read none. None where α(0) or φ''(0) is not so: the sweep then."""
        p = self.p
        self.z[:] = 0.0
        loss_weights(p.loss_code, self.z, p.y, p.s, self.deriv, self.curv)
        alpha = L.neg_deriv(p.loss_code, self.z, p.y, p.s)
        labelled = np.flatnonzero(p.y)
        if labelled.size == 0 or np.any(self.curv != self.curv[0]):
            return None
        k = alpha[labelled[0]] / p.y[labelled[0]]
        if not np.array_equal(alpha, k * p.y):
            return None
        read = 0 if p.data.has_fact("xty") else p.nnz
        np.multiply(p.data.col_norms_sq, self.curv[0], out=self.minv)
        self.minv += p.lam
        np.reciprocal(self.minv, out=self.minv)
        return alpha, k * p.data.xty, read

    def _cholesky_start(self):
        """The start's checkpoint sums at w = 0 from the read of X that forms the first iteration's ∇P and H
        (``_gradient_and_hessian``, kept for that iteration: ``hessian_fresh``): z = 0, α = −φ'(0) and
        Xᵀα = −n(∇P − λw) = −n∇P, so the start reads X once where it read it twice. Only at the start, which a step
        follows unless w = 0 already certifies: after a step, H at the checkpoint's w costs a whole iteration's
        multiply-adds that the run's last checkpoint would waste. Not where the run samples H: its start takes ∇P
        and diag(H) from the Jacobi sweep (``certificate_sums``), and a first step that forms H exactly (tol ≤ 0, or a
        start within SAMPLE_REACH) reads X once more for it. Measured (benchmarks/cholesky_start_bench.py, whole
        calls, the driver's sweep ÷ this): the squared loss's one-iteration runs 1.04–1.14 (ijcnn1 1/n 1.11, w8a 1/n
        1.10), logistic runs of 6–7 iterations 1.01–1.02 (before the sampled Hessian)."""
        p = self.p
        with self._blas_threads():
            self._gradient_and_hessian()
        self.hessian_fresh = True
        xt_alpha = self.grad * -float(p.n_samples)  # w = 0: ∇P = −Xᵀα/n
        return L.neg_deriv(p.loss_code, self.z, p.y, p.s), self.z, xt_alpha

    def iterate(self):
        """w, and on the dual system's path its α (the pair the certificate is taken at), else None (α(w))."""
        return self.w, (self.alpha if self.dual_space else None)


def make_state(problem, sampling, rng, solver="auto", n_jobs=1):
    """The state of a run: ``_hinge_newton.HingeNewtonState`` on the hinge loss (smoothing, with continuation; its
    stages NewtonState runs, with ``solver`` refused unless Cholesky's: ``features_refusal``), NewtonState on the
    smooth losses."""
    if problem.loss == "hinge":
        refusal = features_refusal(problem, {"solver": solver})
        if refusal:
            raise ValueError(refusal)
        return HingeNewtonState(problem, sampling, rng, NewtonState, n_jobs)
    return NewtonState(problem, sampling, rng, solver, n_jobs)


register(MethodSpec(
    name="newton", make=make_state, kind="primal", axis="none",
    source="Boyd & Vandenberghe 2004, Convex Optimization §9.5 (damped Newton, backtracking line search); "
           "H = XᵀDX/n + λI by Cholesky, or by CG on Hessian-vector products (Nocedal & Wright 2006, "
           "Algorithm 7.1, line search Newton-CG); the hinge by smoothing with continuation (Nesterov 2005)",
    losses=SMOOTH_LOSSES | {"hinge"}, supports_l1=False, problem_rule=features_refusal, step_ns=iteration_ns,
))
