"""ROUGE-L F as the ``rouge`` package (1.0.1, pltrdy) computes it for ``Rouge().get_scores([p],
[t], avg=True)["rouge-l"]["f"]``, which LongBench's ``rouge_score`` returns.

That package's summary-level ROUGE-L is not the textbook one, and every quirk changes figures:

- sentences are the pieces between ``.`` (pieces of zero length dropped, each piece's whitespace
  then collapsed, so a piece of spaces becomes an empty sentence); words split on single spaces;
- counts are of *distinct* words (``exclusive=True`` keeps n-grams in sets): ``m`` the reference's,
  ``n`` the prediction's, and the overlap is the number of distinct words in the union of the LCS
  words of every (reference sentence, prediction sentence) pair, each LCS read back by its
  table's tie rule;
- F is ``2 * p * r / (p + r + 1e-8)``;
- anything raised scores 0.0 (LongBench catches every exception): a prediction or truth with no
  sentence, and the ``RecursionError`` of its recursive LCS read-back once a pair's path is longer
  than the frames left under Python's default recursion limit of 1000.
"""

from __future__ import annotations

#: Frames eval.py has on the stack when the package's recursive LCS read-back first runs:
#: ``<module>``, ``scorer``, ``rouge_score``, ``Rouge.get_scores``, ``_get_avg_scores``, the metric's
#: lambda, ``rouge_l_summary_level``, ``_union_lcs`` and ``_recon_lcs`` (``rouge_zh_score`` adds one).
FRAMES_BELOW = 9
#: CPython's default recursion limit: the frames a thread may hold.
RECURSION_LIMIT = 1000


def _sentences(text: str) -> list[str]:
    return [" ".join(piece.split()) for piece in text.split(".") if len(piece) > 0]


def _lcs_words(reference: list[str], prediction: list[str]) -> tuple[set[str], int]:
    """The words of the LCS the package reads back, and how deep its recursion goes to read it."""
    rows, cols = len(reference), len(prediction)
    table = [[0] * (cols + 1) for _ in range(rows + 1)]
    for i in range(1, rows + 1):
        above, row = table[i - 1], table[i]
        word = reference[i - 1]
        for j in range(1, cols + 1):
            row[j] = above[j - 1] + 1 if word == prediction[j - 1] else max(above[j], row[j - 1])
    found: set[str] = set()
    i, j, depth = rows, cols, 1
    while i > 0 and j > 0:
        depth += 1
        if reference[i - 1] == prediction[j - 1]:
            found.add(reference[i - 1])
            i, j = i - 1, j - 1
        elif table[i - 1][j] > table[i][j - 1]:
            i -= 1
        else:
            j -= 1
    return found, depth


def rouge_l(prediction: str, truth: str, *, chinese: bool = False) -> float:
    """ROUGE-L F of ``prediction`` against ``truth``; ``chinese``: called through ``rouge_zh_score``
    (one frame deeper, so its recursion gives out one step sooner)."""
    hypothesis, reference = _sentences(prediction), _sentences(truth)
    if not hypothesis or not reference:
        return 0.0
    frames = RECURSION_LIMIT - FRAMES_BELOW - chinese
    predicted = [sentence.split(" ") for sentence in hypothesis]
    union: set[str] = set()
    for sentence in reference:
        words = sentence.split(" ")
        for candidate in predicted:
            found, depth = _lcs_words(words, candidate)
            if depth > frames:
                return 0.0
            union |= found
    m = len({word for sentence in reference for word in sentence.split(" ")})
    n = len({word for candidate in predicted for word in candidate})
    recall = len(union) / m
    precision = len(union) / n
    return 2.0 * ((precision * recall) / (precision + recall + 1e-8))
