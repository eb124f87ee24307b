"""Conjugate residuals on the free face of SDCA's box-constrained dual (cdlab.solvers._face_cr): it solves the
face's quadratic (checked against numpy's dense solve, for each box loss), never lowers D, keeps v = Xᵀα/(λn)
and the box (ties at a bound included), lowers the face's residual at every budget (where CG's rises), keeps to
its budget, refuses singular faces and ℓ1, and a stalled shrinking run that uses it ends at the same certified
optimum in fewer passes."""
import numpy as np
import pytest
import scipy.sparse as sp

import cdlab
from cdlab.solvers import _face_cr, dual_cd
from cdlab.solvers._box_newton import BOX_NEWTON_MAX_EXAMPLES
from _helpers import mean_scaled_dataset, solve_with_and_without

BOX_LOSSES = ("hinge", "smoothed_hinge", "absolute")


def box_coordinate(problem, alpha):
    """(t, σ, low): α = σ t with t in [low, 1] (``losses.box_gradient``)."""
    if problem.loss == "absolute":
        return alpha.copy(), np.ones_like(alpha), -1.0
    return alpha * problem.y, problem.y, 0.0


def random_setup(loss, n=60, d=40, lam=0.05, seed=0, at_bound=1 / 3):
    """A problem, a feasible α with a share ``at_bound`` of the examples at a bound, v = Xᵀα/(λn), and
    the free face."""
    rng = np.random.default_rng(seed)
    X = sp.random(n, d, density=0.3, random_state=seed, format="csr")
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0) if loss != "absolute" else rng.standard_normal(n)
    problem = cdlab.Problem(X, y, loss=loss, lam=lam)
    t = rng.uniform(0.2, 0.8, n) if loss != "absolute" else rng.uniform(-0.6, 0.6, n)
    bound = rng.random(n) < at_bound
    t[bound] = rng.choice([0.0, 1.0] if loss != "absolute" else [-1.0, 1.0], bound.sum())
    alpha = t * y if loss != "absolute" else t
    return problem, alpha, problem.v_from_alpha(alpha), _face_cr.free_face(problem, alpha, np.arange(n))


def near_identity_setup(loss, scale, seed=0):
    """Six face rows, each near a unit vector (A near a multiple of the identity, so the face's minimiser is
    about λn/scale² in every t), overlapping ten bound rows on six more columns; returns the setup and the
    face's minimiser t* by numpy's dense solve of A t* = a − S X_F v_B, v_B the bound rows' share of v (r is
    affine in t, and A holds its c·t term)."""
    rng = np.random.default_rng(seed)
    m, n_bound, d = 6, 10, 12
    face_rows = np.hstack([np.eye(m) + 0.1 * rng.random((m, m)), 0.05 * rng.random((m, d - m))]) * scale
    bound_rows = np.hstack([np.zeros((n_bound, m)), rng.random((n_bound, d - m))])
    X = sp.csr_matrix(np.vstack([face_rows, bound_rows]))
    n = m + n_bound
    y = np.where(rng.random(n) < 0.5, -1.0, 1.0)
    if loss == "absolute":
        y *= 1.0 + rng.random(n)
    problem = cdlab.Problem(X, y, loss=loss, lam=1.0 / n)
    t = np.concatenate([np.full(m, 0.5), rng.choice([0.0, 1.0], n_bound)])
    if loss == "absolute":
        t[m:] = 2 * t[m:] - 1
    alpha = t * y if loss != "absolute" else t
    face = np.arange(m)
    _, sigma, _ = box_coordinate(problem, alpha)
    c = problem.s if loss == "smoothed_hinge" else 0.0
    lam_n = problem.lam * n
    XF = X[face].toarray() * sigma[face, None]
    v_bound = X[m:].T @ alpha[m:] / lam_n
    a = y[face] if loss == "absolute" else np.ones(m)
    expected = np.linalg.solve(XF @ XF.T / lam_n + c * np.eye(m), a - XF @ v_bound)
    return problem, alpha, problem.v_from_alpha(alpha), face, expected


def run(problem, alpha, v, face, budget=10**9):
    """``face_cr`` with each example of ``face`` its own group."""
    return _face_cr.face_cr(*problem.csr_arrays, problem.y, problem.loss_code, problem.s,
                            problem.lam * problem.n_samples, problem.row_norms_sq, alpha, v,
                            np.arange(face.shape[0] + 1), face, budget)


@pytest.mark.parametrize("loss", BOX_LOSSES)
def test_face_cr_raises_the_dual_and_keeps_v_and_the_box(loss):
    problem, alpha, v, face = random_setup(loss)
    before, start = problem.dual(alpha), alpha.copy()
    assert run(problem, alpha, v, face) > 0
    assert problem.dual(alpha) > before
    np.testing.assert_allclose(v, problem.v_from_alpha(alpha), atol=1e-10)
    t, _, low = box_coordinate(problem, alpha)
    assert np.all(t >= low) and np.all(t <= 1.0)
    outside = np.setdiff1d(np.arange(problem.n_samples), face)
    np.testing.assert_array_equal(alpha[outside], start[outside])  # only the face moves


@pytest.mark.parametrize("loss", BOX_LOSSES)
def test_face_cr_solves_the_face_quadratic(loss):
    """Where the face's minimiser t* lies inside the box, CR ends at numpy's dense solution."""
    problem, alpha, v, face, expected = near_identity_setup(loss, scale=1.5)
    low = -1.0 if loss == "absolute" else 0.0
    assert np.all((expected > low + 0.05) & (expected < 0.95)), expected  # the test's premise
    assert _face_cr.polish(problem, alpha, v, np.arange(problem.n_samples), 10**9) > 0
    t, _, _ = box_coordinate(problem, alpha)
    np.testing.assert_allclose(t[face], expected, atol=1e-8)
    np.testing.assert_allclose(v, problem.v_from_alpha(alpha), atol=1e-10)


def preconditioned_residual(problem, alpha, v, face):
    """‖r‖_{M⁻¹} over ``face`` for the absolute loss: r_i = y_i − x_i·v, M = diag(‖x_i‖²/(λn))."""
    r = problem.y[face] - problem.X[face] @ v
    return float(np.sqrt(np.sum(r * r * problem.lam * problem.n_samples / problem.row_norms_sq[face])))


def ill_conditioned_face(m=30, d=60, seed=0):
    """The absolute loss over m examples, all on the face at α = 0, with A = X Xᵀ/(λn) of condition ~1e4 and
    labels y = A t* for a t* well inside the box: the face's solve meets no bound."""
    rng = np.random.default_rng(seed)
    left, _ = np.linalg.qr(rng.standard_normal((m, m)))
    right, _ = np.linalg.qr(rng.standard_normal((d, m)))
    X = (left * np.logspace(0, -2, m)) @ right.T
    lam = 1.0 / m
    t_star = rng.uniform(-0.05, 0.05, m)
    y = X @ (X.T @ t_star) / (lam * m)
    problem = cdlab.Problem(sp.csr_matrix(X), y, loss="absolute", lam=lam)
    return problem, t_star


def test_face_cr_lowers_the_residual_at_every_budget_where_cg_raises_it():
    """A polish cut short after k products leaves ‖r‖_{M⁻¹} no higher than after k − 1 (CR minimises it over
    the Krylov space), down to the solution; preconditioned CG on the same face, from the same start (numpy,
    below), raises it at some step (the test's premise): CG cut short there would leave a worse residual."""
    problem, t_star = ill_conditioned_face()
    m = problem.n_samples
    face = np.arange(m)
    A = (problem.X @ problem.X.T).toarray() / (problem.lam * m)
    diag = np.diag(A)
    t, r = np.zeros(m), problem.y.copy()
    z = r / diag
    p, rz, cg = z.copy(), r @ z, [np.sqrt(r @ z)]
    for _ in range(3 * m):
        q = A @ p
        step = rz / (p @ q)
        t, r = t + step * p, r - step * q
        z = r / diag
        rz, rz_before = r @ z, rz
        p = z + rz / rz_before * p
        cg.append(np.sqrt(rz))
    rises = np.diff(cg) > 1e-12 * cg[0]
    assert np.any(rises & (np.array(cg[:-1]) > 1e-10 * cg[0])), "the premise: CG's residual rises before it ends"
    face_nnz = int(problem.row_nnz.sum())
    residuals, duals = [], []
    for products in range(0, 3 * m):
        alpha, v = np.zeros(m), np.zeros(problem.n_features)
        run(problem, alpha, v, face, face_nnz + 2 * products * face_nnz)
        assert np.all(np.abs(alpha) < 1.0)  # no bound met: one Krylov solve, never restarted
        np.testing.assert_allclose(v, problem.v_from_alpha(alpha), atol=1e-10)
        residuals.append(preconditioned_residual(problem, alpha, v, face))
        duals.append(problem.dual(alpha))
    assert np.all(np.diff(residuals) <= 1e-12 * residuals[0]), np.diff(residuals).max()
    assert np.all(np.diff(duals) >= -1e-14), np.diff(duals).min()
    assert residuals[-1] <= 1e-6 * residuals[0]
    np.testing.assert_allclose(alpha, t_star, atol=1e-6)


@pytest.mark.parametrize("loss", BOX_LOSSES)
def test_each_step_raises_the_dual_through_cuts_and_restarts(loss):
    """On faces whose solve meets bounds (examples fixed, CR restarted), the polish cut short after k products
    leaves D no lower than after k − 1, for every k up to its end: no step lowers D."""
    for seed in range(5):
        problem, alpha0, v0, face = random_setup(loss, seed=seed)
        face_nnz = int(problem.row_nnz[face].sum())
        duals, fixed = [problem.dual(alpha0)], 0
        for products in range(1, 40):
            alpha, v = alpha0.copy(), v0.copy()
            run(problem, alpha, v, face, face_nnz + 2 * products * face_nnz)
            duals.append(problem.dual(alpha))
            t, _, low = box_coordinate(problem, alpha)
            fixed = max(fixed, int(np.sum((t[face] <= low) | (t[face] >= 1.0))))
        assert fixed > 0, seed  # the premise: some example met its bound
        assert np.all(np.diff(duals) >= -1e-12 * abs(duals[0])), (seed, np.diff(duals).min())


def first_steps(problem, alpha, face):
    """(CR's step, CG's step, the step to the first bound) along z = M⁻¹r at (α, v(α)) on ``face``, by numpy."""
    t, sigma, low = box_coordinate(problem, alpha)
    c = problem.s if problem.loss == "smoothed_hinge" else 0.0
    lam_n = problem.lam * problem.n_samples
    XF = problem.X[face].toarray() * sigma[face, None]
    A = XF @ XF.T / lam_n + c * np.eye(face.size)
    a = problem.y[face] if problem.loss == "absolute" else np.ones(face.size)
    r = a - c * t[face] - XF @ problem.v_from_alpha(alpha)
    diag = np.diag(A)
    z = r / diag
    az = A @ z
    room = np.where(z > 0, (1.0 - t[face]) / np.where(z > 0, z, 1), np.where(z < 0, (low - t[face]) / np.where(
        z < 0, z, 1), np.inf))
    return (z @ az) / (az @ (az / diag)), (r @ z) / (z @ az), room.min()


@pytest.mark.parametrize("loss", BOX_LOSSES)
def test_a_restart_steps_to_the_bound_that_cgs_step_reaches(loss):
    """Where CR's first step along z stops short of the first bound but f's minimiser along z (CG's step) lies
    beyond it (the premise, by numpy), one product takes the step to that bound: an example is fixed there."""
    for seed in range(200):
        problem, alpha, v, face = random_setup(loss, seed=seed)
        cr_step, cg_step, reach = first_steps(problem, alpha, face)
        if cr_step < 0.9 * reach and cg_step > 1.1 * reach:
            break
    else:
        pytest.fail("no face where CR's first step stops short of the bound CG's reaches")
    face_nnz = int(problem.row_nnz[face].sum())
    before = problem.dual(alpha)
    assert run(problem, alpha, v, face, 3 * face_nnz) == 3 * face_nnz  # the residual and one product
    t, _, low = box_coordinate(problem, alpha)
    assert np.any((t[face] == low) | (t[face] == 1.0)), seed
    assert problem.dual(alpha) > before
    np.testing.assert_allclose(v, problem.v_from_alpha(alpha), atol=1e-10)


@pytest.mark.parametrize("loss", ["hinge", "absolute"])  # the smoothed hinge's t* stays below 1/s = 1
def test_a_minimiser_outside_the_box_is_met_at_the_bound(loss):
    """With the face's minimiser beyond the box (|t*| > 1 in every coordinate), CR cuts its steps there:
    the face ends at its bound, D rises, v stays Xᵀα/(λn)."""
    problem, alpha, v, face, expected = near_identity_setup(loss, scale=0.1)
    assert np.all(np.abs(expected) > 1.0), expected  # the test's premise
    before = problem.dual(alpha)
    run(problem, alpha, v, face)
    t, _, _ = box_coordinate(problem, alpha)
    np.testing.assert_array_equal(t[face], np.sign(expected))
    assert problem.dual(alpha) > before
    np.testing.assert_allclose(v, problem.v_from_alpha(alpha), atol=1e-10)


@pytest.mark.parametrize("loss", BOX_LOSSES)
def test_examples_that_meet_their_bound_together_all_stay_in_the_box(loss):
    """Duplicated rows at equal t reach their bound at the same step: every one is fixed there (one left
    live would step past it and leave D = −inf)."""
    for seed in range(40):
        problem, alpha, v, face = random_setup(loss, n=30, d=40, seed=seed, at_bound=0.5)
        X = sp.vstack([problem.X, problem.X]).tocsr()
        y = np.concatenate([problem.y, problem.y])
        doubled = cdlab.Problem(X, y, loss=loss, lam=problem.lam)
        alpha2 = np.concatenate([alpha, alpha])
        v2 = doubled.v_from_alpha(alpha2)
        face2 = _face_cr.free_face(doubled, alpha2, np.arange(doubled.n_samples))
        before = doubled.dual(alpha2)
        run(doubled, alpha2, v2, face2)
        t, _, low = box_coordinate(doubled, alpha2)
        assert np.all(t >= low) and np.all(t <= 1.0), seed
        assert doubled.dual(alpha2) >= before, seed


def test_face_cr_keeps_to_its_budget_and_reads_nothing_without_room_for_a_product():
    problem, alpha, v, face = random_setup("hinge")
    face_nnz = int(problem.row_nnz[face].sum())
    start, before = alpha.copy(), problem.dual(alpha)
    assert run(problem, alpha, v, face, 3 * face_nnz - 1) == 0  # the residual and one product do not fit
    np.testing.assert_array_equal(alpha, start)
    read = run(problem, alpha, v, face, 5 * face_nnz)  # the residual, then at most two products
    assert face_nnz < read <= 5 * face_nnz
    assert problem.dual(alpha) > before


def test_singular_faces_and_an_l1_term_are_refused():
    # more free examples than the columns their rows use: hinge and absolute refuse (on an active set too
    # large for projected Newton, tests/test_box_newton.py), the smoothed hinge (A ⪰ s·I) runs
    for loss in BOX_LOSSES:
        problem, alpha, v, face = random_setup(loss, n=BOX_NEWTON_MAX_EXAMPLES + 44, d=10)
        assert face.size > np.count_nonzero(problem.col_nnz)
        start = alpha.copy()
        read = _face_cr.polish(problem, alpha, v, np.arange(problem.n_samples), 10**9)
        if loss == "smoothed_hinge":
            assert read > 0 and problem.dual(alpha) > problem.dual(start)
        else:
            assert read == 0
            np.testing.assert_array_equal(alpha, start)
    # a face that runs without ℓ1 is refused with it
    problem, alpha, v, face, _ = near_identity_setup("hinge", scale=1.5)
    assert _face_cr.polish(problem, alpha.copy(), v.copy(), np.arange(problem.n_samples), 10**9) > 0
    l1 = cdlab.Problem(problem.X, problem.y, loss="hinge", lam=problem.lam, l1=1e-3)
    assert _face_cr.polish(l1, alpha, v, np.arange(problem.n_samples), 10**9) == 0


def test_a_stalled_shrinking_run_polishes_and_ends_at_the_same_certified_optimum_in_fewer_passes(monkeypatch):
    """reuters_moneyfx hinge λ = 1/n (the race's problem): coordinate ascent stalls on a face of about a
    thousand free examples; over seeds 0-7 the runs with face CR take fewer passes than those without it
    (medians 64 against 200 when measured; one seed's path is luck: 35 to 639 passes without), and every
    pair is certified at the optimum it brackets."""
    X, y = mean_scaled_dataset("reuters_moneyfx")
    problem = cdlab.Problem(X, y, loss="hinge", lam=1.0 / X.shape[0])
    tol = 1e-6 * 0.0489  # the race's relative gap at P* ≈ 0.0489
    passes, polish = {"with": [], "without": []}, dual_cd.polish
    for seed in range(8):
        monkeypatch.setattr(dual_cd, "polish", polish)  # the helper leaves the reader of nothing in place
        kw = dict(sampling="permutation", shrinking=True, tol=tol, max_passes=3000, seed=seed)
        with_cr, without, reads = solve_with_and_without(monkeypatch, dual_cd, "polish", problem, **kw)
        assert reads and max(reads) > 0
        for res in (with_cr, without):
            assert res.converged and problem.gap(res.w, res.alpha) <= tol
        for one, other in ((with_cr, without), (without, with_cr)):
            assert one.trace.primal.iloc[-1] - other.trace.dual.iloc[-1] <= 2 * tol
        assert np.all(np.diff(with_cr.trace.dual) >= -1e-15)
        passes["with"].append(with_cr.trace.passes.iloc[-1])
        passes["without"].append(without.trace.passes.iloc[-1])
    assert np.median(passes["with"]) < 0.5 * np.median(passes["without"]), passes


def test_a_runs_polishes_read_at_most_what_its_steps_read():
    """heart_scale hinge λ = 0.01/n, where projected Newton polishes a small active set (``_box_newton``), seeds
    0-3, with POLISH_SHARE = 4 (each polish's budget 4× its interval's reads, so that the cap on all of a run's
    polishes is what binds): every run is certified and its polishes read something, and at most what its steps
    read."""
    X, y = mean_scaled_dataset("heart_scale")
    problem = cdlab.Problem(X, y, loss="hinge", lam=0.01 / X.shape[0])
    tol = 1e-6 * 0.352  # the race's relative gap at P* ≈ 0.352
    polish = dual_cd.polish
    for seed in range(4):
        reads = []
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(dual_cd, "POLISH_SHARE", 4.0)
            patch.setattr(dual_cd, "polish", lambda *args: reads.append(polish(*args)) or reads[-1])
            res = cdlab.solve(problem, "sdca", sampling="permutation", shrinking=True, tol=tol, max_passes=3000,
                              seed=seed)
        assert res.converged and problem.gap(res.w, res.alpha) <= tol
        assert 0 < sum(reads) <= res.trace.nnz_touched.iloc[-1] - sum(reads)


def test_the_face_cr_reads_no_more_than_the_room_the_driver_leaves():
    """The driver hands ``synchronize`` what max_passes leaves (0 once the run is stopped); the face CR
    reads at most that, and nothing moves when there is no room."""
    problem, alpha, v, face, _ = near_identity_setup("hinge", scale=1.5)
    for room in (0, 3 * int(problem.row_nnz[face].sum()), 10**9):
        state = dual_cd.DualCDState(problem, "permutation", np.random.default_rng(0), update="exact",
                                    shrinking=True)
        state.alpha[:] = alpha
        state.v[:] = v
        # a budget the room alone limits: a long interval of a long run
        state.face_due, state.last_row, state.nnz_touched = True, {"nnz_touched": 0}, 10**9
        read = state.resync(room)
        assert read <= room and state.face_due is False
        if room == 0:
            np.testing.assert_array_equal(state.alpha, alpha)
        else:
            assert read > 0 and problem.dual(state.alpha) > problem.dual(alpha)
