"""Three small text metrics in pure Python, for worked examples of local accuracy.

They follow the usual definitions on whitespace tokens (no lower-casing or
punctuation splitting); they are not drop-in replacements for jiwer or sacrebleu.
"""

from __future__ import annotations

from collections import Counter

from ..errors import InputError, InputTypeError

__all__ = ["word_error_rate", "unigram_f1", "chrf"]


def _text(value: object, argument: str) -> str:
    if not isinstance(value, str):
        raise InputTypeError(f"`{argument}` must be a string; got {type(value).__name__}.")
    return value


def _edit_distance(a: list[str], b: list[str]) -> int:
    previous = list(range(len(b) + 1))
    for i, x in enumerate(a, start=1):
        current = [i] + [0] * len(b)
        for j, y in enumerate(b, start=1):
            current[j] = min(previous[j] + 1, current[j - 1] + 1, previous[j - 1] + (x != y))
        previous = current
    return previous[-1]


def word_error_rate(reference: str, hypothesis: str) -> float:
    """Word error rate: word-level Levenshtein distance divided by the reference length.

    Lower is better (0 for an exact match; it can exceed 1).

    Notes
    -----
    ``WER = (S + D + I) / N`` with the minimal number of substitutions ``S``, deletions
    ``D`` and insertions ``I`` turning the reference's ``N`` words into the hypothesis.

    Examples
    --------
    >>> word_error_rate("the cat sat on the mat", "the cat sat on mat")
    0.16666666666666666
    >>> word_error_rate("a b", "a x b y")
    1.0
    """
    ref = _text(reference, "reference").split()
    hyp = _text(hypothesis, "hypothesis").split()
    if not ref:
        raise InputError("word_error_rate needs a non-empty reference (it divides by its length).")
    return _edit_distance(ref, hyp) / len(ref)


def unigram_f1(reference: str, hypothesis: str) -> float:
    """Bag-of-words F1 of the hypothesis against the reference (clipped unigram counts).

    Notes
    -----
    With ``m = sum_w min(count_hyp(w), count_ref(w))``: precision ``P = m / |hyp|``,
    recall ``R = m / |ref|``, ``F1 = 2 P R / (P + R)`` (0 when ``m = 0``).

    Examples
    --------
    >>> unigram_f1("the cat sat on the mat", "the cat on a mat")  # m = 4, P = 4/5, R = 4/6
    0.7272727272727272
    """
    ref = Counter(_text(reference, "reference").split())
    hyp = Counter(_text(hypothesis, "hypothesis").split())
    m = sum((ref & hyp).values())
    if m == 0:
        return 0.0
    p = m / sum(hyp.values())
    r = m / sum(ref.values())
    return 2 * p * r / (p + r)


def chrf(reference: str, hypothesis: str, *, max_order: int = 6, beta: float = 2.0) -> float:
    """Character n-gram F-score (chrF-like, Popovic 2015), on a 0-1 scale.

    Notes
    -----
    Whitespace is removed. For each order ``n = 1..max_order`` with at least one n-gram
    in both strings, ``P_n`` and ``R_n`` are the clipped n-gram matches divided by the
    hypothesis' and the reference's n-gram counts; the score is the average over these
    orders of ``F_n = (1 + beta^2) P_n R_n / (beta^2 P_n + R_n)`` (``F_n = 0`` without
    matches), and 0 if no order qualifies.

    Examples
    --------
    >>> chrf("abc", "abd", max_order=2)  # n=1: P=R=2/3; n=2: P=R=1/2
    0.5833333333333333
    """
    ref = "".join(_text(reference, "reference").split())
    hyp = "".join(_text(hypothesis, "hypothesis").split())
    scores = []
    for n in range(1, int(max_order) + 1):
        ref_grams = Counter(ref[i : i + n] for i in range(len(ref) - n + 1))
        hyp_grams = Counter(hyp[i : i + n] for i in range(len(hyp) - n + 1))
        if not ref_grams or not hyp_grams:
            continue
        m = sum((ref_grams & hyp_grams).values())
        if m == 0:
            scores.append(0.0)
            continue
        p = m / sum(hyp_grams.values())
        r = m / sum(ref_grams.values())
        b2 = beta * beta
        scores.append((1 + b2) * p * r / (b2 * p + r))
    return sum(scores) / len(scores) if scores else 0.0
