"""The order in which R sorts text levels: ``factor(x)`` sorts with the locale's collation, not by bytes.

R built with ICU (Linux distributions' and CRAN's macOS and Windows builds: ``capabilities("ICU")``) collates with
ICU in every locale but ``C``/``POSIX`` (``C.UTF-8`` included), and ICU's root collation (that of ``en_US`` and most
locales) is the Unicode Collation Algorithm with its default table: letters compare case-insensitively first
(``"apple" < "Banana"``), then by accents, then lower case before upper (``"a" < "A"``); spaces and punctuation come
before digits, digits before letters, and digits compare one by one (``"10" < "9"``). :func:`collation_key` is that
order for Latin, Greek and Cyrillic text (letters of other scripts by code point after them); R run with
``LC_COLLATE=C`` sorts by code point instead, which a user pins with ``factor(x, levels = c(...))`` or a pandas
categorical column.
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterable

__all__ = ["collation_key", "collated"]

#: ICU root's order of the ASCII characters that are neither letters nor digits (``sort()`` in R, ICU 72)
_PUNCTUATION = "\t\n\x0b\x0c\r _-,;:!?.'\"()[]{}@*/\\&#%`^+<=>|~$"
_PUNCT_RANK = {c: i for i, c in enumerate(_PUNCTUATION)}
#: letters the Unicode table sorts as two (tertiary difference only)
_EXPANSIONS = {"æ": "ae", "œ": "oe", "ß": "ss", "ĳ": "ij"}
#: letters the Unicode table sorts as a base letter with a secondary difference
_VARIANTS = {"ø": "o", "đ": "d", "ħ": "h", "ł": "l", "ŧ": "t", "ı": "i"}
#: the secondary weight between the two letters of an expansion (above every accent's)
_EXPANSION_MARK = 1 << 30

_PUNCT, _OTHER_SYMBOL, _DIGIT, _LETTER = 1, 2, 3, 4


def _element(ch: str) -> tuple[tuple[int, int], int, int] | None:
    """The primary weight, secondary and tertiary weights of one character (None: ignorable)."""
    lower = ch.lower()
    tertiary = 1 if ch != lower else 0
    if lower in _VARIANTS:
        return (_LETTER, ord(_VARIANTS[lower])), 1, tertiary
    if ch in _PUNCT_RANK:
        return (_PUNCT, _PUNCT_RANK[ch]), 0, 0
    category = unicodedata.category(ch)
    if category == "Nd":
        return (_DIGIT, unicodedata.digit(ch)), 0, 0
    if category[0] == "L":
        return (_LETTER, ord(lower)), 0, tertiary
    if category[0] == "C":
        return None  # control characters are ignorable
    return (_OTHER_SYMBOL, ord(ch)), 0, 0


def collation_key(text: str) -> tuple:
    """A sort key giving R's (ICU root) order of text levels.

    Parameters
    ----------
    text : str

    Returns
    -------
    tuple
        Primary weights (base characters), then secondary (accents), then tertiary (case) weights, then the text
        itself (code points) to order texts the collation deems equal.

    Notes
    -----
    The Unicode Collation Algorithm compares the primary weights of the whole strings first, then the secondary
    weights, then the tertiary ones. A text is decomposed (NFD): a combining accent adds a secondary weight after its
    base letter; ``æ``, ``œ``, ``ß`` expand to two letters with a secondary mark between them (``"ae" < "æ"``).

    Examples
    --------
    >>> sorted(["banana", "Apple", "apple", "B", "10", "9", "a_b", "ab"], key=collation_key)
    ['10', '9', 'a_b', 'ab', 'apple', 'Apple', 'B', 'banana']
    """
    primary: list[tuple[int, int]] = []
    secondary: list[int] = []
    tertiary: list[int] = []
    for ch in unicodedata.normalize("NFD", text):
        if unicodedata.combining(ch):
            secondary.append(1 + unicodedata.combining(ch) * 0x10000 + ord(ch))
            continue
        expanded = _EXPANSIONS.get(ch.lower())
        if expanded is not None:  # the table's two letters with a secondary mark between them (above accents')
            primary += [(_LETTER, ord(part)) for part in expanded]
            secondary += [0, _EXPANSION_MARK, 0]
            tertiary += [2 + (ch != ch.lower())] * 2
            continue
        element = _element(ch)
        if element is None:
            continue
        primary.append(element[0])
        secondary.append(element[1])
        tertiary.append(element[2])
    return tuple(primary), tuple(secondary), tuple(tertiary), text


def collated(values: Iterable[str]) -> list[str]:
    """The distinct ``values`` in R's order of factor levels (:func:`collation_key`).

    Examples
    --------
    >>> collated(["beta", "Alpha", "alpha", "beta"])
    ['alpha', 'Alpha', 'beta']
    """
    return sorted(set(values), key=collation_key)
