"""``method="auto"``: pick the method from the face-off and the condition number.

``cdlab.solve(problem, method="auto")`` chooses, then runs the choice through
the driver like any other method (same checkpoints, same certificate):

1. **Primal or dual, and the sampling** — for a smooth loss, the face-off
   (Csiba & Richtárik 2016, eqs. 12–16; theory.md §4): total work
       T_P = nnz (1 + max_j ‖f_j‖²/c)  (uniform),  nnz + C_P/c  (importance, eq. 14)
       T_D = nnz (1 + max_i ‖x_i‖²/c)  (uniform),  nnz + C_D/c
   with c = λγn, C_P = Σ_j ‖f_j‖₀‖f_j‖², C_D = Σ_i ‖x_i‖₀‖x_i‖² (eq. 16). The
   side and sampling with the least bound win, ties going to uniform, exactly
   as ``cdlab.theory.faceoff(problem).prediction`` does (a test checks that the
   two agree); within the side, importance sampling is run only when its bound
   is ≥ ``IMPORTANCE_MARGIN``× below uniform's. The quantities come from
   the data's facts (``problem.data``: norms, C_P, C_D), not from
   ``cdlab.theory``, whose package import loads sympy (≈ 0.6 s): the solver
   layer never imports the symbolic layer. The dual side runs SDCA's exact
   step (it maximises D along the coordinate, so it does at least as well as
   the face-off's θ/q_i gradient step); the primal side runs primal_cd, and only
   when its predicted seconds (``first_order_seconds``: the side's bound in
   passes × FIRST_ORDER_PASSES_PER_BOUND × the cost of the side's pass for the
   loss, ``pass_ns``, and its checkpoints) are ``PRIMAL_MARGIN``× below SDCA's
   (closer calls go to SDCA, whose exact step the dual bound understates; a
   logistic primal CD pass costs an exp per nonzero, 5–9× SDCA's pass on
   colon-cancer and madelon). Where
   the bound picks uniform sampling, the run uses a fresh random permutation
   per epoch (random reshuffling): the same bound applies per draw in
   expectation, and it needed about half the passes of i.i.d. draws in
   benchmarks/race.py.
   A non-smooth loss (hinge, absolute) has no γ, so the face-off does not
   apply: SDCA, whose exact step handles it, with random reshuffling and
   liblinear's shrinking (``cdlab.solvers._shrinking``; its dual coordinate
   lives in a box, and the examples at a bound leave the epochs): in
   benchmarks/race.py --quick (hinge, two runs) it reached the certified gap
   4.3–4.5× sooner than without on heart_scale (13 passes vs 227), 1.9–2.2× on
   colon-cancer, 1.3–2.0× on rcv1_small at λ = 1/n, and as soon (1.0×) at
   λ = 0.01/n, where 78 % of the optimal α_i are inside the box; with the
   absolute loss (λ = 1/n, same data and a9a, w8a, gap 1e-6·P*) it was as fast
   or faster everywhere (w8a: certified in 142 passes, plain SDCA not in 3000).
   With n_jobs > 1 it still runs on one thread (shrinking has no parallel mode),
   and the reason says so. Except on the hinge where λ is small, d few and n ≫ d
   (``_hinge_newton.auto_reason``: C·mean ‖x_i‖² ≥ 10 for liblinear's C = 1/(λn),
   d ≤ 256, n ≥ 100·d): Newton on smoothed hinges with continuation, faster than
   SDCA there on the race's data and slower everywhere else it was measured (the
   table beside ``_hinge_newton.AUTO_MIN_C_NORM``). The smoothed hinge is smooth and goes through the
   face-off below, without shrinking: there it measured mixed (2.2× faster on
   w8a, 1.3× slower on rcv1_small at λ = 0.01/n).
2. **Plain or accelerated** — the condition number κ = R²/(λγn): SDCA needs
   O(n(1 + κ)) steps, accelerated SDCA (ASDCA) O(n(1 + √κ)) (Shalev-Shwartz &
   Zhang 2013), so acceleration can only pay when κ ≫ 1, and then only if its
   dearer steps and looser constants do not eat the gain. Measured
   (benchmarks/race.py, rcv1_small, squared and logistic, κ from 0.25 to 1e4):
   ASDCA needed 3–50× SDCA's passes and more seconds everywhere, so auto stays
   plain below ``KAPPA_ACCELERATE`` and takes ASDCA (uniform, L2 only) above it.
3. **Or Newton** — with a smooth loss and L2 only, damped Newton
   (``cdlab.solvers.newton``, its inner solver the one ``newton.inner_solver``
   picks) replaces the pick above when its predicted seconds are lower (on the CG
   path: NEWTON_CG_MARGIN× its seconds, a margin chosen on measured picks):
       Newton:      newton.predicted_ns: with Cholesky, newton.newton_iterations (the logistic
                    loss's from the duality gap at w = 0) × newton.cholesky_iteration_ns (H,
                    Cholesky, passes); with CG, newton.cg_products (measured laws in κ, and
                    for the logistic loss per Newton iteration; at most rank + 1 per Newton
                    iteration) Hessian-vector products of 2 passes each; and their
                    checkpoints (costs.checkpoint_ns)
       first order: ``first_order_seconds`` of the pick's side
   Newton's iterations grow with the decades of its starting gap (2–12 on the
   race's logistic problems), CG's products an iteration (preconditioned) as
   κ^0.1, the first-order passes as κ, so
   Newton takes the small-λ and squared-loss problems (Cholesky with few
   features, CG with many), SDCA or primal CD
   those whose first-order passes are few and cheap. The pass and Newton
   constants are fitted by benchmarks/auto_calibration.py on the logistic and
   squared losses (the smoothed hinge's rest on an earlier calibration), which
   also prints each candidate's measured and predicted seconds and auto's pick
   ÷ the fastest candidate on the shipped data sets (λ = 1/n and 0.01/n); the
   margins and KAPPA_ACCELERATE rest on the measurements cited beside them.
   benchmarks/auto_offline.py replays auto's picks against a saved race.
"""
from __future__ import annotations

from . import _hinge_newton as hinge_newton
from . import costs, driver, newton
from ._gap_estimate import estimate_schedules
from ._kernels import beyond_cache
from ._threads import check_n_jobs
from .base import get_method

AUTO = "auto"
# κ = R²/(λγn) above which auto runs accelerated SDCA instead of SDCA; set above every
# κ measured so far, none of which acceleration won (module docstring).
KAPPA_ACCELERATE = 1e5
# The primal side is run only when its predicted seconds (``first_order_seconds``) are this many times below
# the dual side's. The dual side runs SDCA's exact step, which maximises D along each coordinate and so gains
# at least what the face-off's θ/q_i gradient step (whose bound is used) gains; primal CD runs the bounded
# method itself. Measured (benchmarks/race.py --quick, rcv1_small and colon-cancer, logistic and squared,
# λ = 1/n and 0.01/n): where the primal bound was 1.15–2.8× below the dual one, SDCA still reached the
# certified gap first, 1.3–8× sooner; colon-cancer logistic 0.01/n, 14.8× below in the bound, SDCA 2.9×
# sooner (each primal pass ~6× dearer, and half the passes the bound implies).
PRIMAL_MARGIN = 3.0
# Importance sampling (eq. 14) is run only when its bound on work is this many times below
# uniform's: a random permutation per epoch, which importance sampling cannot use, needed
# about half the passes of i.i.d. uniform draws in the race (SDCA and primal CD); and on w8a
# (logistic, λ = 1/n), where importance's bound is 2.56× below uniform's, importance sampling took
# 18.5 passes to the certified gap against 8.0 for the permutation (benchmarks/race.py). The face-off
# presets that favour importance do so by ≥ 10×.
IMPORTANCE_MARGIN = 4.0
# The first-order pick's passes to that gap over the face-off's bound on them (eq. 15, uniform sampling, no
# log(1/ε) factor): SDCA with a permutation measured a median of 4.6 (0.35–8.0) on the shipped data sets,
# logistic and squared, λ = 1/n and 0.01/n (benchmarks/auto_calibration.py); primal CD 3.1–7.6 where the
# bound's max_j ‖f_j‖² is near the average (colon-cancer, madelon, rcv1_small, reuters_moneyfx, phishing,
# mushrooms), and far fewer where a few dense columns make it loose (w8a, ijcnn1 squared at 0.01/n: 1e-4–0.02).
FIRST_ORDER_PASSES_PER_BOUND = 5.0
# The seconds of a pass (benchmarks/auto_calibration.py: a whole call minus its checkpoints, over its passes),
# ns on one thread: SDCA ~0.75 a nonzero (madelon, dense rows: 0.75–0.88) and per step its random order, its
# row's bookkeeping and its 1-D solve (squared 27–67 on a9a, w8a, ijcnn1, mushrooms, phishing, reuters_moneyfx;
# the logistic loss's Newton iterations 130–155, reuters_moneyfx 203, at cdlab ae30471); primal CD per nonzero its
# margin update and the loss derivative there (logistic: an exp, 6.0–10; squared 1.0–1.5) and per step on a
# non-empty column ~45 (colon-cancer 60, reuters_moneyfx 44).
SDCA_NS_PER_NNZ = 0.75
# ... while X's arrays fit this machine's last-level cache (``_kernels.beyond_cache``); beyond it a pass streams X
# from memory and gathers w from beyond L1: 1.8–2.2 ns a nonzero on the race's dense 1e5 × 500 (600 MB), 5.5–6.3 on
# its text-like problem at 1e7 nonzeros (120 MB, w of 25000 entries), against 0.7–1.4 on madelon and rcv1_small
# (benchmarks/sdca_epoch.py's kernel, one thread). Measured
# before SDCA prefetched whole rows beyond the cache (``_kernels.PREFETCH_AHEAD``'s comment: 3 passes on that
# text-like problem 1.17–1.51× faster since), not refitted: 3.0 stands between the two problems.
SDCA_NS_PER_NNZ_BEYOND_CACHE = 3.0
# SDCA's passes on the logistic loss and the smoothed hinge stop growing with 1/λ below λ = 1/n where n ≤ this
# share of d (``separable_cap``).
SEPARABLE_SHARE = 0.25
SDCA_NS_PER_STEP = {"logistic": 145.0, "squared": 50.0, "smoothed_hinge": 50.0}
PRIMAL_CD_NS_PER_NNZ = {"logistic": 7.0, "squared": 1.1, "smoothed_hinge": 1.6}
PRIMAL_CD_NS_PER_STEP = 45.0
# Newton on its CG path replaces the first-order pick where its predicted seconds times this margin are below the
# pick's. Its products are the least certain prediction (newton.CG_PRODUCTS_PER_ITERATION's comment: the logistic
# law errs high where CG is cheap, 0.16–0.34× on the race's text-like and dense problems; squared 0.29–4.0, 10–90 %).
# The margin is no correction of a bias but the value with the least worst pick ÷ best on measured calls
# (benchmarks/auto_calibration.py --big --candidates sdca "newton cholesky" "newton cg", 48 problems: logistic and
# squared, λ = 1/n and 0.01/n; the picks replayed offline at each margin), chosen with newton.CG_MARGIN after the
# sampled Hessian and the refit of both of Newton's paths: 0.9–1.0 give a worst of 1.12 (the text-like problem's
# logistic loss at 1/n takes SDCA, 286 ms against CG's 256), geometric mean 1.004; 0.8 sends reuters_moneyfx squared
# 1/n to CG (2.29× SDCA's seconds) and mushrooms logistic 1/n (1.39); 1.05 and above send the text-like problem's
# squared loss at 1/n to SDCA (2.47: 466 ms against CG's 189 in these tables). Before the refit: 0.8 (0.8–0.9 there).
NEWTON_CG_MARGIN = 0.95
# The picks auto runs on one thread whatever n_jobs it is given: SDCA's parallel mode, PASSCoDe-Wild (``dual_cd``),
# certified at the same gap, was slower than one thread on every problem where benchmarks/race.py ran it on two
# (its ``ours2``: the fastest parallel method's n_jobs=2 rerun, 16 problems, logistic, squared and hinge, λ = 1/n and
# 0.01/n): it needed 1.3-6.1× the passes (racing writes to v are lost, and each checkpoint recomputes v from α) and
# took 1.7-5.3× the seconds: a9a logistic 1/n 0.196 s against 0.059, reuters_moneyfx squared 1/n 0.088 against
# 0.017, the text-like problem at 5e7 nonzeros logistic 1/n 13.3 s against 2.5.
SERIAL_PICKS = frozenset({"sdca", "dual_cd"})


def faceoff_work(problem) -> dict:
    """Face-off eqs. (12)–(15): the bound on total work of each side × sampling."""
    n = problem.n_samples
    c = problem.lam * problem.gamma * n
    nnz = float(problem.nnz)
    C_P, C_D = problem.data.C_P, problem.data.C_D
    return {("primal", "uniform"): nnz * (1 + problem.col_norms_sq.max() / c),
            ("primal", "importance"): nnz + C_P / c,
            ("dual", "uniform"): nnz * (1 + problem.row_norms_sq.max() / c),
            ("dual", "importance"): nnz + C_D / c,
            "C_P": C_P, "C_D": C_D}


def pass_ns(problem, side) -> float:
    """Predicted ns of one pass of the side's coordinate method on one thread: SDCA (dual) or primal CD."""
    if side == "dual":
        per_nnz = SDCA_NS_PER_NNZ_BEYOND_CACHE if beyond_cache(problem) else SDCA_NS_PER_NNZ
        return per_nnz * problem.nnz + SDCA_NS_PER_STEP[problem.loss] * problem.n_samples
    # primal CD draws the non-empty columns only
    return PRIMAL_CD_NS_PER_NNZ[problem.loss] * problem.nnz + PRIMAL_CD_NS_PER_STEP * problem.n_nonempty_columns


def first_order_passes(problem, side, bound_passes) -> float:
    """Predicted passes of the side's coordinate method: FIRST_ORDER_PASSES_PER_BOUND × the face-off's bound
    (in passes), SDCA's bound at most ``separable_cap``."""
    if side == "dual":
        bound_passes = min(bound_passes, separable_cap(problem))
    return FIRST_ORDER_PASSES_PER_BOUND * bound_passes


def first_order_seconds(problem, side, bound_passes) -> float:
    """Predicted seconds of a whole call of the side's coordinate method: its ``first_order_passes`` at its
    ``pass_ns``, and the driver's checkpoints among them."""
    passes = first_order_passes(problem, side, bound_passes)
    cap = costs.auto_cap(problem)
    if side == "dual" and estimate_schedules(problem):  # SDCA checkpoints when its estimate says
        checkpoints = costs.due_checkpoints(passes, cap)
    else:
        checkpoints = costs.auto_checkpoints(passes, cap=cap)
    return (passes * pass_ns(problem, side) + checkpoints * costs.checkpoint_ns(problem)) * 1e-9


def separable_cap(problem) -> float:
    """The dual bound's passes at λ = max(λ, 1/n) for the logistic loss and the smoothed hinge with
    n ≤ SEPARABLE_SHARE·d (else ∞).
    Data with n ≤ d are linearly separable in general position: as λ falls, the optimal margins grow and most
    α_i go to the end of their interval, where the conjugate's curvature far exceeds the γ the bound assumes.
    Measured (SDCA with a permutation, λ = 1/n → 0.01/n, benchmarks/auto_calibration.py): rcv1_small (n/d =
    0.02) 5 → 9 passes and colon-cancer (0.03) 5 → 19, where the bound grows 21× and 34×; reuters_moneyfx
    (n/d = 0.93, sparse text of lower rank) 6 → 121, and the n > d data sets 6–43× (a9a 6 → 162). The smoothed
    hinge's α_i live in [0, 1] and sit at its ends (rcv1_small at 0.01/n: SDCA 7× faster than Newton–CG,
    newton_cg_bench.py)."""
    if problem.loss not in ("logistic", "smoothed_hinge") or problem.n_samples > SEPARABLE_SHARE * problem.n_features:
        return float("inf")
    c = problem.gamma  # λγn at λ = 1/n
    return 1.0 + float(problem.row_norms_sq.max()) / c


def predicted_seconds(problem) -> dict:
    """The cost model's seconds of a whole call for each candidate auto weighs: SDCA, primal CD (each at its
    side's face-off bound with uniform sampling) and Newton with each inner solver that takes the problem."""
    work = faceoff_work(problem)
    out = {method: first_order_seconds(problem, side, work[side, "uniform"] / problem.nnz)
           for side, method in (("dual", "sdca"), ("primal", "primal_cd"))}
    if _newton_takes(problem):
        for solver in ("cholesky", "cg"):
            if not newton.features_refusal(problem, {"solver": solver}):
                out[f"newton {solver}"] = newton.predicted_ns(problem, solver) * 1e-9
    return out


def _best_sampling(uniform, importance):
    """Theorem 2: importance ≤ uniform; a tie (equal norms) goes to uniform."""
    return ("uniform", uniform) if uniform <= importance * (1 + 1e-9) else ("importance", importance)


def choose(problem) -> dict:
    """What auto runs on ``problem`` and why: method, sampling, side, reason and the numbers."""
    choice = first_order_choice(problem)
    if problem.loss == "hinge":
        why = hinge_newton.auto_reason(problem) if _newton_takes(problem) else ""
        if not why:
            return choice
        return dict(choice, method="newton", sampling="uniform", side="primal", options={},
                    inner_solver=newton.inner_solver(problem), reason=choice["reason"] + "; but " + why + ": newton")
    if not _newton_takes(problem):
        return choice
    first_s = choice["predicted_seconds"][choice["method"]]
    solver = newton.inner_solver(problem)
    newton_s = newton.predicted_ns(problem, solver) * 1e-9
    choice["predicted_seconds"] = {"newton": newton_s, choice["method"]: first_s}
    if newton_s * (NEWTON_CG_MARGIN if solver == "cg" else 1.0) >= first_s:
        return choice
    checkpoint_ms = costs.checkpoint_ns(problem) * 1e-6
    if solver == "cholesky":
        exact, sampled = newton.cholesky_iterations(problem)
        rows = newton.sample_size(problem)
        how = (f"with d = {problem.n_features} features damped Newton is predicted faster: "
               f"{exact:.3g} iteration{'' if exact == 1 else 's'} × "
               f"{newton.cholesky_iteration_ns(problem) * 1e-6:.3g} ms (the d × d Hessian, its Cholesky factor "
               f"and 2 passes)")
        if sampled:
            how += (f" after {sampled:.3g} × {newton.cholesky_iteration_ns(problem, sampled=True) * 1e-6:.3g} ms "
                    f"on a Hessian sampled from {rows} of the {problem.n_samples} rows (a pass for the gradient, "
                    f"one for XΔ and the sampled rows)")
        how += f" + {newton.solve_checkpoints(problem, 'cholesky'):.0f} checkpoints × {checkpoint_ms:.3g} ms"
    else:
        products = newton.cg_products(problem)
        how = (f"Newton with conjugate gradients (Hessian-vector products, 2 passes each) is predicted within "
               f"{1 / NEWTON_CG_MARGIN:.3g}× (auto.NEWTON_CG_MARGIN): "
               f"~{products:.0f} products over ~{newton.cg_newton_iterations(problem):.0f} steps "
               f"({newton.solve_ns(problem, 'cg') * 1e-9:.3g} s) + "
               f"{newton.solve_checkpoints(problem, 'cg'):.0f} checkpoints × {checkpoint_ms:.3g} ms")
    handover = newton.cg_handover(problem)
    if handover:
        how += (f" (it starts on conjugate gradients and hands over to Cholesky once their measured contraction "
                f"says the products left cost more than a Cholesky iteration's ~{handover:.0f} products)")
    reason = choice["reason"] + f"; but {how} = {newton_s:.3g} s against {first_s:.3g} s for {choice['method']}: newton"
    return dict(choice, method="newton", sampling="uniform", side="primal", accelerated=False, options={},
                inner_solver=solver, reason=reason)


def _newton_takes(problem) -> bool:
    """Whether newton accepts ``problem`` with its default options (its MethodSpec's checks: a smooth loss or the
    hinge, L2 only, λ > 0, the hinge's d)."""
    try:
        get_method("newton").check(problem, "uniform", {})
    except ValueError:
        return False
    return True


def first_order_choice(problem) -> dict:
    """The coordinate (or, for a large κ, accelerated) method auto runs when Newton does not win:
    items 1 and 2 of the module docstring."""
    if problem.lam <= 0:
        raise ValueError("method='auto' needs lam > 0 (it certifies through the dual and compares κ = R²/(λγn))")
    n = problem.n_samples
    if not problem.is_smooth:
        return dict(method="sdca", sampling="permutation", side="dual", accelerated=False, kappa=None,
                    options={"shrinking": True},
                    reason=f"the {problem.loss} loss is not smooth, so the face-off (which needs γ) does not "
                           "apply: SDCA (its exact step handles the loss) with a random permutation per epoch "
                           "and shrinking (its dual coordinates live in a box; the examples at a bound leave the "
                           "epochs until a checkpoint finds them wrong or the active set is restored)")
    work = faceoff_work(problem)
    kappa = problem.R ** 2 / (problem.lam * problem.gamma * n)
    sides = {side: _best_sampling(work[side, "uniform"], work[side, "importance"]) for side in ("primal", "dual")}
    # the face-off's own tie-break: sort by (work, method name), so an exact tie goes to dual_cd
    (w_win, face_side), (w_lose, _) = sorted([(sides["primal"][1], "primal"), (sides["dual"][1], "dual")],
                                             key=lambda t: (t[0], "primal_cd" if t[1] == "primal" else "dual_cd"))
    # within a side: importance only when its bound beats uniform's by more than what random reshuffling
    # saves over i.i.d. uniform draws
    run = {side: ("importance" if sides[side][0] == "importance"
                  and work[side, "uniform"] > IMPORTANCE_MARGIN * work[side, "importance"] else "uniform")
           for side in ("primal", "dual")}
    bound = {side: work[side, run[side]] / problem.nnz for side in ("primal", "dual")}
    seconds = {side: first_order_seconds(problem, side, bound[side]) for side in ("primal", "dual")}
    capped = separable_cap(problem) < bound["dual"]
    side = "primal" if PRIMAL_MARGIN * seconds["primal"] < seconds["dual"] else "dual"
    sampling = run[side]
    nnz = problem.nnz
    why = (f"face-off (Csiba & Richtárik eq. 15): {face_side} RCD with {sides[face_side][0]} sampling has the least "
           f"bound on total work, {w_win / nnz:.3g} passes vs {w_lose / nnz:.3g} for the "
           f"{'dual' if face_side == 'primal' else 'primal'} side (C_P/C_D = {work['C_P'] / work['C_D']:.3g})")
    passes = {side: first_order_passes(problem, side, bound[side]) for side in ("primal", "dual")}
    costs_why = (f"; predicted seconds ({FIRST_ORDER_PASSES_PER_BOUND:g} × the bound's passes"
                 + (f", SDCA's taken at λ = 1/n as n ≤ {SEPARABLE_SHARE:g}·d" if capped else "")
                 + f", at the {problem.loss} loss's pass costs, with checkpoints): primal CD {passes['primal']:.3g} "
                 f"passes × {pass_ns(problem, 'primal') * 1e-6:.3g} ms = {seconds['primal']:.3g} s, SDCA "
                 f"{passes['dual']:.3g} passes × {pass_ns(problem, 'dual') * 1e-6:.3g} ms = {seconds['dual']:.3g} s")
    if side == "primal":
        why += costs_why + f": ≥ {PRIMAL_MARGIN:g}× below, the primal side"
    elif face_side == "primal":
        why += (costs_why + f": not {PRIMAL_MARGIN:g}× below, and SDCA's exact step gains at least what the "
                "bounded dual step does: the dual side")
    run_sampling = "permutation" if sampling == "uniform" else sampling
    if side == "dual" and kappa > KAPPA_ACCELERATE and problem.l1 == 0:
        return dict(method="asdca", sampling="uniform", side=side, accelerated=True, kappa=kappa, work=work,
                    faceoff_sampling=sampling, predicted_seconds={"asdca": seconds[side]},
                    reason=why + f"; κ = R²/(λγn) = {kappa:.3g} > {KAPPA_ACCELERATE:g}: accelerated SDCA (ASDCA, "
                                 "uniform; its seconds predicted as SDCA's: it has no cost model of its own)")
    method = "sdca" if side == "dual" else "primal_cd"
    plain = (f"; κ = R²/(λγn) = {kappa:.3g} ≤ {KAPPA_ACCELERATE:g}: plain "
             + ("SDCA (exact dual step)" if side == "dual" else "primal CD"))
    if side == "primal" and kappa > KAPPA_ACCELERATE:
        plain = f"; κ = {kappa:.3g} is large, but cdlab has no accelerated primal coordinate method: primal CD"
    if side == "dual" and kappa > KAPPA_ACCELERATE:
        plain = f"; κ = {kappa:.3g} is large, but ASDCA does not take l1 > 0: plain SDCA"
    order = ""
    if run_sampling == "permutation":
        order = ("; uniform sampling (importance's bound is not ≥ "
                 f"{IMPORTANCE_MARGIN:g}× lower), run as a random permutation per epoch")
    return dict(method=method, sampling=run_sampling, side=side, accelerated=False, kappa=kappa, work=work,
                faceoff_sampling=sampling, predicted_seconds={method: seconds[side]}, reason=why + plain + order)


def solve(problem, method="sdca", sampling=None, *, reference=None, **kwargs):
    """``cdlab.solve``: run ``method`` on ``problem`` (see :func:`cdlab.solvers.driver.solve`
    for every argument). ``method="auto"`` picks the method, its sampling and plain vs
    accelerated (this module's docstring), runs it certified like any other, and records
    the choice: ``result.method``/``result.sampling`` are what ran, ``result.auto_reason``
    says why, and ``result.trace.attrs["auto"]`` holds the choice and its numbers.
    ``sampling=None`` means "uniform" for a named method and auto's pick for "auto".
    ``n_jobs`` > 1 with "auto": used when the pick has a parallel mode; otherwise (or when
    the pick shrinks, or is SDCA (``SERIAL_PICKS``), or runs Newton's CG where its sweeps stay serial:
    ``newton.cg_serial_reason``)
    the pick runs on one thread and ``auto_reason`` says so (a named method without one refuses n_jobs > 1).
    ``reference``: P*, or True to compute it (:func:`cdlab.reference.resolve_reference`,
    after every other argument is checked), or None/False for none.
    """
    from ..reference import resolve_reference  # it solves through the driver, never through this door

    if not (isinstance(method, str) and method == AUTO):
        run = driver.prepare(problem, method, "uniform" if sampling is None else sampling, **kwargs)
        return run.execute(resolve_reference(problem, reference))
    if not (sampling is None or (isinstance(sampling, str) and sampling == AUTO)):
        raise ValueError(f"method='auto' picks the sampling too; leave sampling out (or pass 'auto'), "
                         f"got {sampling!r}")
    extra = set(kwargs) - driver.SOLVE_ARGS
    if extra:
        raise ValueError(f"method='auto' takes no method options, got {sorted(extra)}")
    choice = choose(problem)
    n_jobs = check_n_jobs(kwargs.get("n_jobs", 1))
    options = choice.get("options", {})
    if n_jobs > 1 and not get_method(choice["method"]).parallel:
        kwargs = {**kwargs, "n_jobs": 1}
        choice["reason"] += (f"; n_jobs={n_jobs} not used: {choice['method']} has no parallel mode (methods with one: "
                             f"{driver.parallel_methods()}), so it runs on one thread")
    elif n_jobs > 1 and choice["method"] == "newton" and problem.loss == "hinge":
        kwargs = {**kwargs, "n_jobs": 1}
        choice["reason"] += (f"; n_jobs={n_jobs} not used: Newton on the hinge forms H by its one-thread sparse sweep "
                             f"and factors at most {hinge_newton.AUTO_MAX_FEATURES} columns")
    elif n_jobs > 1 and options.get("shrinking"):
        kwargs = {**kwargs, "n_jobs": 1}
        choice["reason"] += f"; n_jobs={n_jobs} not used: shrinking runs on one thread"
    elif n_jobs > 1 and choice["method"] in SERIAL_PICKS:
        kwargs = {**kwargs, "n_jobs": 1}
        choice["reason"] += (f"; n_jobs={n_jobs} not used: {choice['method']}'s parallel mode (PASSCoDe-Wild) "
                             "measured slower than its one thread (auto.SERIAL_PICKS)")
    elif n_jobs > 1 and choice.get("inner_solver") == "cg" and (serial := newton.cg_serial_reason(problem, n_jobs)):
        kwargs = {**kwargs, "n_jobs": 1}
        choice["reason"] += f"; n_jobs={n_jobs} not used: {serial}"
    run = driver.prepare(problem, choice["method"], choice["sampling"], **kwargs, **options)
    result = run.execute(resolve_reference(problem, reference))
    result.auto_reason = choice["reason"]
    meta = {k: v for k, v in choice.items() if k != "work"}
    if "work" in choice:
        meta["work_passes"] = {f"{s}/{m}": float(v) / problem.nnz
                               for (s, m), v in ((k, v) for k, v in choice["work"].items() if isinstance(k, tuple))}
    result.trace.attrs["auto"] = meta
    return result


__all__ = ["AUTO", "FIRST_ORDER_PASSES_PER_BOUND", "IMPORTANCE_MARGIN", "KAPPA_ACCELERATE", "NEWTON_CG_MARGIN",
           "PRIMAL_CD_NS_PER_NNZ", "PRIMAL_CD_NS_PER_STEP", "PRIMAL_MARGIN", "SDCA_NS_PER_NNZ", "SDCA_NS_PER_STEP",
           "SEPARABLE_SHARE", "SERIAL_PICKS", "choose", "faceoff_work", "first_order_choice", "first_order_passes",
           "first_order_seconds", "pass_ns", "predicted_seconds", "separable_cap", "solve"]
