"""The polish of a small active set that projected Newton declines (its dense work over the budget, or its rows'
columns above BOX_NEWTON_MAX_COLUMNS) going on to conjugate residuals on the free face's groups
(``_face_cr.FACE_CR_AFTER_BOX_NEWTON``, as shipped), against no polish there.

    python benchmarks/face_cr_fallback_bench.py [NAME:FACTOR ...] [--repeats 3] [--seeds 3]

"fallback" as shipped, "none" with ``_face_cr.FACE_CR_AFTER_BOX_NEWTON`` = False; the ratio none ÷ fallback (> 1:
the fallback faster). The problems, timing and columns: ``setting_pairs.hinge_main``.
"""
from __future__ import annotations

import race  # noqa: F401  first: it sets numba's thread count
from cdlab.solvers import _face_cr
from readmit_bench import DEFAULT
from setting_pairs import switch_main


def main(argv=None):
    switch_main(argv, __doc__.splitlines()[0], _face_cr, "FACE_CR_AFTER_BOX_NEWTON", False, ("fallback", "none"),
                DEFAULT, repeats=3, seeds=3)


if __name__ == "__main__":
    main()
