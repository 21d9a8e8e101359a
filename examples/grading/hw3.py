"""A student's answer to "how many elements does FlashAttention's forward pass move?", as a Python function
(the docs' example for ``tilebound grade FILE.py:FUNC``; docs/teaching.md, "The grader").

It has a bug the grader finds: the last step rounds the inner loop's count down to whole row blocks, as if
the row block ``B_r`` always divided ``N`` (Dao et al. 2022, Algorithm 1; a partial block moves fewer rows).
"""


def total(N, d, M):
    """FlashAttention forward, Algorithm 1, elements moved, with the paper's blocks (line 1)."""
    B_c = -(-M // (4 * d))               # ceil(M / 4d)
    B_r = min(B_c, d)
    T_c = -(-N // B_c)                   # key blocks
    return 3 * N * d + 2 * N + T_c * (3 * d + 4) * N // B_r * B_r
