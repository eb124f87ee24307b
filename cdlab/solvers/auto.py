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
   when its bound is ``PRIMAL_MARGIN``× below the dual side's (closer calls go to
   SDCA, whose exact step the dual bound understates). Where
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
   and the reason says so. The smoothed hinge is smooth and goes through the
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
   picks) replaces the pick above when its predicted seconds are lower — by
   ``CG_MARGIN``× on the CG path:
       Newton:      newton.predicted_ns: with Cholesky, newton.NEWTON_ITERATIONS[loss]
                    × (newton.cholesky_iteration_ns (H, Cholesky, passes) +
                    newton.checkpoint_ns); with CG, newton.cg_products (growing as
                    √κ) Hessian-vector products of 2 passes each, and checkpoints
       first order: FIRST_ORDER_PASSES_PER_BOUND × (the face-off's least bound, in passes)
                    × FIRST_ORDER_NS_PER_NNZ × nnz
   Newton's iterations barely depend on κ, CG's products grow as √κ, the
   first-order passes as κ, so Newton takes the small-λ and squared-loss
   problems (Cholesky with few features, CG with many: rcv1_small and
   reuters_moneyfx squared at λ = 0.01/n, reuters_moneyfx logistic at 0.01/n),
   SDCA the well-conditioned ones. Measured for the Cholesky path (one thread, loaded machine, whole solve to a certified gap
   ≤ 1e-6·|P*|, rows scaled by their mean norm, median of 3; SDCA seconds ÷
   Newton seconds): at λ = 0.01/n logistic a9a 47, ijcnn1 24, w8a 24, phishing
   8.9, heart_scale 5.9, mushrooms 1.5; squared loss at λ = 1/n 3.0–19 and at
   0.01/n 21–440; logistic at λ = 1/n 0.46 (mushrooms), 0.77 (heart_scale),
   0.96–0.98 (phishing, a9a), 1.3 (ijcnn1), 1.7 (w8a), 2.6 (madelon), where
   the rule's call can go either way for at most a factor of about 2.6; and
   0.01–0.22 on colon-cancer (d = 2000, n = 62), where the rule keeps SDCA or
   primal CD. (Newton then checkpointed at geometric intervals; it now
   checkpoints after every iteration where an iteration outweighs
   ``newton.EVERY_STEP_RATIO`` checkpoints, which saves 1–3 of its 6–13.)
"""
from __future__ import annotations

from . import driver, newton
from ._threads import check_n_jobs
from .base import get_method

AUTO = "auto"
# κ = R²/(λγn) above which auto runs accelerated SDCA instead of SDCA; set above every
# κ measured so far, none of which acceleration won (module docstring).
KAPPA_ACCELERATE = 1e5
# The primal side is run only when its bound on total work is this many times below the dual side's.
# The dual side runs SDCA's exact step, which maximises D along each coordinate and so gains at least
# what the face-off's θ/q_i gradient step (whose bound is compared) gains; primal CD runs the bounded
# method itself. Measured (benchmarks/race.py --quick, rcv1_small and colon-cancer, logistic and
# squared, λ = 1/n and 0.01/n): where the primal bound was 1.15–2.8× below the dual one, SDCA still
# reached the certified gap first, 1.3–8× sooner; the face-off presets that favour primal do so by 28×
# and 191×.
PRIMAL_MARGIN = 3.0
# Importance sampling (eq. 14) is run only when its bound on work is this many times below
# uniform's: a random permutation per epoch, which importance sampling cannot use, needed
# about half the passes of i.i.d. uniform draws in the race (SDCA and primal CD); and on w8a
# (logistic, λ = 1/n), where importance's bound is 2.56× below uniform's, importance sampling took
# 18.5 passes to the certified gap against 8.0 for the permutation (benchmarks/race.py). The face-off
# presets that favour importance do so by ≥ 10×.
IMPORTANCE_MARGIN = 4.0
# The first-order pick's passes to that gap over the face-off's bound on them (eq. 15, no log(1/ε)
# factor): SDCA measured 4.8–8.5 (squared 6.5–8.5) on the same data sets, 1.35 once (mushrooms,
# logistic, 0.01/n), 11 on w8a; and its seconds per nonzero of a pass, checkpoints included: 6–35 ns
# (110 on a9a at 6 passes, where the checkpoints dominate).
FIRST_ORDER_PASSES_PER_BOUND = 5.0
FIRST_ORDER_NS_PER_NNZ = 15.0
# Newton on its CG path replaces the first-order pick only when predicted this many times faster. Measured
# (benchmarks/newton_cg_bench.py and the CG path's calibration, one thread, loaded machine, rows scaled by
# the mean norm; predicted ratio → measured first-order seconds ÷ CG's): rcv1_small squared 0.01/n
# 3.2 → 2.5, reuters_moneyfx squared 0.01/n 3.7 → 3.9, logistic 0.01/n 2.3 → 3.6, smoothed hinge 0.01/n
# 2.5 → 1.9; below the margin: rcv1_small smoothed hinge 0.01/n 1.9 → 0.14 (SDCA's exact step on a dual
# whose coordinates sit at their bounds needs far fewer passes than its bound), rcv1_small logistic 0.01/n
# 1.7 → 1.0, colon-cancer squared 0.01/n 1.6 → 2.0 (primal CD; a win left out), squared 1/n 1.4 → 0.6,
# logistic 1/n 0.94 → 0.6, rcv1_small squared 1/n 0.76 → 0.8.
CG_MARGIN = 2.0


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


def _best_sampling(uniform, importance):
    """Theorem 2: importance ≤ uniform; a tie (equal norms) goes to uniform."""
    return ("uniform", uniform) if uniform <= importance * (1 + 1e-9) else ("importance", importance)


def choose(problem) -> dict:
    """What auto runs on ``problem`` and why: method, sampling, side, reason and the numbers."""
    choice = first_order_choice(problem)
    if not _newton_takes(problem):
        return choice
    work = choice["work"]
    bound_passes = float(min(work[side, s] for side in ("primal", "dual") for s in ("uniform", "importance"))
                         / problem.nnz)
    first_ns = FIRST_ORDER_PASSES_PER_BOUND * bound_passes * FIRST_ORDER_NS_PER_NNZ * problem.nnz
    solver = newton.inner_solver(problem)
    newton_ns = newton.predicted_ns(problem, solver)
    choice["predicted_seconds"] = {"newton": newton_ns * 1e-9, choice["method"]: first_ns * 1e-9}
    margin = 1.0 if solver == "cholesky" else CG_MARGIN
    if margin * newton_ns >= first_ns:
        return choice
    checkpoint_ms = float(newton.checkpoint_ns(problem)) * 1e-6
    if solver == "cholesky":
        iterations = newton.NEWTON_ITERATIONS[problem.loss]
        how = (f"with d = {problem.n_features} features damped Newton is predicted faster: "
               f"{iterations} iteration{'s' if iterations > 1 else ''} × "
               f"({newton.cholesky_iteration_ns(problem) * 1e-6:.3g} ms for the d × d Hessian, its Cholesky factor "
               f"and 2 passes + {checkpoint_ms:.3g} ms for a checkpoint)")
    else:
        products = newton.cg_products(problem)
        how = (f"Newton with conjugate gradients (Hessian-vector products, 2 passes each) is predicted faster: "
               f"~{products:.0f} products over ~{newton.cg_newton_iterations(problem):.0f} steps "
               f"({newton.solve_ns(problem, 'cg') * 1e-9:.3g} s) + "
               f"{newton.solve_checkpoints(problem, 'cg'):.0f} checkpoints × {checkpoint_ms:.3g} ms")
    reason = (choice["reason"] + f"; but {how} = {newton_ns * 1e-9:.3g} s against "
              f"{first_ns * 1e-9:.3g} s for {choice['method']} ({FIRST_ORDER_PASSES_PER_BOUND:g} × the bound's "
              f"{bound_passes:.3g} passes): newton")
    return dict(choice, method="newton", sampling="uniform", side="primal", accelerated=False, options={},
                inner_solver=solver, reason=reason)


def _newton_takes(problem) -> bool:
    """Whether newton accepts ``problem`` with its default options (its MethodSpec's checks: a smooth loss,
    L2 only, λ > 0)."""
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
                           "epochs until the active set is restored)")
    work = faceoff_work(problem)
    kappa = problem.R ** 2 / (problem.lam * problem.gamma * n)
    sides = {side: _best_sampling(work[side, "uniform"], work[side, "importance"]) for side in ("primal", "dual")}
    # the face-off's own tie-break: sort by (work, method name), so an exact tie goes to dual_cd
    (w_win, side), (w_lose, _) = sorted([(sides["primal"][1], "primal"), (sides["dual"][1], "dual")],
                                        key=lambda t: (t[0], "primal_cd" if t[1] == "primal" else "dual_cd"))
    face_side = side
    if side == "primal" and w_lose < PRIMAL_MARGIN * w_win:
        side = "dual"
    sampling = sides[side][0]
    # within the side: importance only when its bound beats uniform's by more than what
    # random reshuffling saves over i.i.d. uniform draws
    if sampling == "importance" and work[side, "uniform"] <= IMPORTANCE_MARGIN * work[side, "importance"]:
        sampling = "uniform"
    nnz = problem.nnz
    why = (f"face-off (Csiba & Richtárik eq. 15): {face_side} RCD with {sides[face_side][0]} sampling has the least "
           f"bound on total work, {w_win / nnz:.3g} passes vs {w_lose / nnz:.3g} for the "
           f"{'dual' if face_side == 'primal' else 'primal'} side (C_P/C_D = {work['C_P'] / work['C_D']:.3g})")
    if side != face_side:
        why += (f"; but only {w_lose / w_win:.3g}× below (< {PRIMAL_MARGIN:g}), and SDCA's exact step gains at least "
                "what the bounded dual step does: the dual side")
    run_sampling = "permutation" if sampling == "uniform" else sampling
    if side == "dual" and kappa > KAPPA_ACCELERATE and problem.l1 == 0:
        return dict(method="asdca", sampling="uniform", side=side, accelerated=True, kappa=kappa, work=work,
                    faceoff_sampling=sampling,
                    reason=why + f"; κ = R²/(λγn) = {kappa:.3g} > {KAPPA_ACCELERATE:g}: accelerated SDCA (ASDCA, "
                                 "uniform)")
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
                faceoff_sampling=sampling, reason=why + plain + order)


def solve(problem, method="sdca", sampling=None, *, reference=None, **kwargs):
    """``cdlab.solve``: run ``method`` on ``problem`` (see :func:`cdlab.solvers.driver.solve`
    for every argument). ``method="auto"`` picks the method, its sampling and plain vs
    accelerated (this module's docstring), runs it certified like any other, and records
    the choice: ``result.method``/``result.sampling`` are what ran, ``result.auto_reason``
    says why, and ``result.trace.attrs["auto"]`` holds the choice and its numbers.
    ``sampling=None`` means "uniform" for a named method and auto's pick for "auto".
    ``n_jobs`` > 1 with "auto": used when the pick has a parallel mode; otherwise (or when
    the pick shrinks, which runs on one thread) the pick runs on one thread and ``auto_reason``
    says so (a named method without one refuses n_jobs > 1).
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
    elif n_jobs > 1 and options.get("shrinking"):
        kwargs = {**kwargs, "n_jobs": 1}
        choice["reason"] += f"; n_jobs={n_jobs} not used: shrinking runs on one thread"
    elif n_jobs > 1 and choice.get("inner_solver") == "cg":
        kwargs = {**kwargs, "n_jobs": 1}
        choice["reason"] += f"; n_jobs={n_jobs} not used: newton's CG path runs on one thread"
    run = driver.prepare(problem, choice["method"], choice["sampling"], **kwargs, **options)
    result = run.execute(resolve_reference(problem, reference))
    result.auto_reason = choice["reason"]
    meta = {k: v for k, v in choice.items() if k != "work"}
    if "work" in choice:
        meta["work_passes"] = {f"{s}/{m}": float(v) / problem.nnz
                               for (s, m), v in ((k, v) for k, v in choice["work"].items() if isinstance(k, tuple))}
    result.trace.attrs["auto"] = meta
    return result


__all__ = ["AUTO", "CG_MARGIN", "FIRST_ORDER_NS_PER_NNZ", "FIRST_ORDER_PASSES_PER_BOUND", "IMPORTANCE_MARGIN", "KAPPA_ACCELERATE",
           "PRIMAL_MARGIN", "choose", "faceoff_work", "first_order_choice", "solve"]
