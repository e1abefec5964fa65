"""Perturbations (seeded, pluggable) and the pure-Python text metrics, against hand computations."""

from __future__ import annotations

import numpy as np
import pytest

from mixeval.errors import InputError
from mixeval.meta import (
    DropWords,
    RandomTranspositions,
    chrf,
    n_transpositions,
    perturb,
    unigram_f1,
    word_error_rate,
)

# ----------------------------------------------------------------------------- DropWords


@pytest.mark.parametrize(
    "n, k", [(0, 0), (1, 0), (2, 0), (3, 1), (5, 1), (7, 1), (8, 2), (10, 2), (12, 2), (13, 3), (100, 20)]
)
def test_drop_words_count_is_twenty_percent_rounded(n, k):
    assert DropWords().n_dropped(n) == k
    text = " ".join(f"w{i}" for i in range(n))
    assert len(DropWords()(text, np.random.default_rng(0)).split()) == n - k


def test_drop_words_keeps_order_is_seeded_and_uniform():
    words = [f"w{i}" for i in range(10)]
    text = " ".join(words)
    out = DropWords()(text, np.random.default_rng(1)).split()
    assert out == [w for w in words if w in out]  # a subsequence
    assert DropWords()(text, np.random.default_rng(5)) == DropWords()(text, np.random.default_rng(5))
    rng = np.random.default_rng(2)
    dropped = np.zeros(10)
    for _ in range(2000):
        kept = set(DropWords()(text, rng).split())
        dropped += [w not in kept for w in words]
    # each position is dropped with probability 0.2: 400 +- 18 (sd) per position
    assert np.all(np.abs(dropped - 400) < 80), dropped


def test_drop_words_errors_and_fraction():
    assert DropWords(0.5).n_dropped(5) == 3  # 2.5 rounds half up
    with pytest.raises(InputError, match="fraction"):
        DropWords(1.5)
    with pytest.raises(TypeError, match="text"):
        DropWords()(["a", "b"], np.random.default_rng(0))


# ----------------------------------------------------------------------------- RandomTranspositions


def test_number_of_transpositions():
    assert [n_transpositions(n) for n in (1, 2, 10, 100, 1000)] == [0, 0, 5, 100, 1500]
    with pytest.raises(InputError):
        n_transpositions(0)


def test_random_transpositions():
    ranking = list(range(100))
    out = RandomTranspositions()(ranking, np.random.default_rng(3))
    assert sorted(out) == ranking and out != ranking and ranking == list(range(100))
    one = RandomTranspositions(k=1)(ranking, np.random.default_rng(4))
    assert sum(a != b for a, b in zip(one, ranking)) == 2
    assert RandomTranspositions(k=0)(ranking, np.random.default_rng(4)) == ranking
    t = RandomTranspositions()(tuple("abcdefghij"), np.random.default_rng(5))
    assert isinstance(t, tuple) and sorted(t) == list("abcdefghij")
    a = RandomTranspositions()(np.arange(20), np.random.default_rng(6))
    assert isinstance(a, np.ndarray) and a.dtype == np.arange(20).dtype
    assert RandomTranspositions()([7], np.random.default_rng(0)) == [7]
    r1 = RandomTranspositions()(ranking, np.random.default_rng(9))
    r2 = RandomTranspositions()(ranking, np.random.default_rng(9))
    assert r1 == r2
    with pytest.raises(TypeError, match="ranked list"):
        RandomTranspositions()("abc", np.random.default_rng(0))
    with pytest.raises(InputError, match="non-negative"):
        RandomTranspositions(k=-1)


def test_perturb_is_seeded_and_pluggable():
    texts = ["a b c d e", "one two three four five six", "x y z"]
    assert perturb(texts, random_state=3) == perturb(texts, random_state=np.random.default_rng(3))
    reverse = lambda output, rng: output[::-1]  # noqa: E731 - any callable (output, rng) works
    assert perturb(["abc"], reverse) == ["cba"]
    with pytest.raises(TypeError, match="callable"):
        perturb(texts, "drop")
    with pytest.raises(TypeError, match="random_state"):
        perturb(texts, random_state="seed")


# ----------------------------------------------------------------------------- text metrics


def test_word_error_rate_hand_computed():
    assert word_error_rate("a b c d", "a x c") == 0.5  # one substitution, one deletion
    assert word_error_rate("a b", "") == 1.0
    assert word_error_rate("a b", "a b") == 0.0
    assert word_error_rate("a b", "c a d b e") == 1.5  # three insertions
    with pytest.raises(InputError, match="non-empty reference"):
        word_error_rate("", "a")
    with pytest.raises(TypeError, match="string"):
        word_error_rate(["a"], "a")


def test_unigram_f1_hand_computed():
    assert unigram_f1("the the cat", "the cat cat dog") == pytest.approx(4 / 7, abs=1e-15)
    assert unigram_f1("a b", "c d") == 0.0
    assert unigram_f1("a b", "") == 0.0
    assert unigram_f1("a b", "b a") == 1.0


def test_chrf_hand_computed():
    assert chrf("abc", "abd", max_order=2) == pytest.approx((2 / 3 + 1 / 2) / 2, abs=1e-15)
    assert chrf("ab", "abc", max_order=1) == pytest.approx(10 / 11, abs=1e-15)  # P = 2/3, R = 1, beta = 2
    assert chrf("abc", "a", max_order=2) == pytest.approx(5 / 13, abs=1e-15)  # no hypothesis bigrams
    assert chrf("a b", "ab", max_order=2) == 1.0  # whitespace ignored
    assert chrf("the cat", "the cat") == 1.0
    assert chrf("abc", "xyz") == 0.0
    assert chrf("abc", "") == 0.0
