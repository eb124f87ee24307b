"""The fast-math flags under which a numba loop sums in vector lanes.

LLVM may not reorder a floating-point sum unless told it may, so a plain
``for j: s += a[j] * b[j]`` loop compiles to scalar code bound by the adder's
latency. ``reassoc`` lets it keep several vector accumulators and add them at
the end; ``contract`` lets it fuse each multiply-add. None of the other flags:
NaN and infinities keep their meaning, so a NaN entry still gives a NaN sum.

The order of such a sum is fixed for one compiled version of a function (numba
compiles one per argument types, a strided array's apart from a contiguous
one's) on one processor, not the order of the entries. A quantity that must
agree bit for bit where two places compute it is therefore computed by one
function, which both call with arguments of the same types (``Problem`` makes
its vectors contiguous float64).
"""
VECTOR_SUM = {"reassoc", "contract"}
