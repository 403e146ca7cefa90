"""LongBench's metrics, computed as THUDM's ``metrics.py`` and ``eval.py`` compute them.

Every function takes the prediction and one ground truth and returns what the official function
returns for them, quirks included (docs/longbench.md lists each): :func:`score` applies a task's
metric the way ``eval.py`` does, to the first line only for trec, triviaqa, samsum and lsht, and
keeps the maximum over the row's answers.
"""

from __future__ import annotations

import difflib
import re
import string
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from .chinese import words
from .rouge_l import rouge_l

_ARTICLES = re.compile(r"\b(a|an|the)\b")
_PUNCTUATION = frozenset(string.punctuation)
#: ``normalize_zh_answer``'s punctuation: ASCII and the full-width and CJK marks it lists.
_ZH_PUNCTUATION = _PUNCTUATION | frozenset(
    "！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〾〿–—‘’‛“”„‟…‧﹏."
)
_NUMBER = re.compile(r"\d+")


def normalize_answer(text: str) -> str:
    """SQuAD's normalization: lower case, ASCII punctuation and articles out, spaces collapsed."""
    text = "".join(ch for ch in text.lower() if ch not in _PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", text).split())


def normalize_zh_answer(text: str) -> str:
    """Lower case, Chinese and ASCII punctuation out, every whitespace removed."""
    return "".join("".join(ch for ch in text.lower() if ch not in _ZH_PUNCTUATION).split())


def token_f1(prediction: Sequence[str], truth: Sequence[str]) -> float:
    """F1 of two token lists counted as multisets; 0 when none is shared."""
    same = sum((Counter(prediction) & Counter(truth)).values())
    if same == 0:
        return 0
    precision = 1.0 * same / len(prediction)
    recall = 1.0 * same / len(truth)
    return (2 * precision * recall) / (precision + recall)


def qa_f1(prediction: str, truth: str, **_: Any) -> float:
    return token_f1(normalize_answer(prediction).split(), normalize_answer(truth).split())


def qa_f1_zh(prediction: str, truth: str, **_: Any) -> float:
    """jieba's words, each normalized, the empty ones dropped."""

    def tokens(text: str) -> list[str]:
        return [token for token in map(normalize_zh_answer, words(text)) if token]

    return token_f1(tokens(prediction), tokens(truth))


def rouge(prediction: str, truth: str, **_: Any) -> float:
    """ROUGE-L F of the ``rouge`` package (0.0 wherever it raises)."""
    return rouge_l(prediction, truth)


def rouge_zh(prediction: str, truth: str, **_: Any) -> float:
    """:func:`rouge` over jieba's words joined by spaces."""
    return rouge_l(" ".join(words(prediction)), " ".join(words(truth)), chinese=True)


def classification(prediction: str, truth: str, *, all_classes: Iterable[str] | None, **_: Any) -> float:
    """1/k when the truth is among the k class names the prediction contains.

    A class that is part of the truth (and not the truth) is dropped from the matches, as the
    official loop drops it: by removing from the list it iterates, so the match after a removed one
    is never looked at (kept: it is what every published figure computed).
    """
    if all_classes is None:
        raise ValueError("a classification row needs all_classes (the task's class names)")
    matches = [name for name in all_classes if name in prediction]
    for name in matches:
        if name in truth and name != truth:
            matches.remove(name)
    return 1.0 / len(matches) if truth in matches else 0.0


def _share_of(target: str, prediction: str) -> float:
    """The share of the numbers in the prediction that equal ``target`` (0.0 with no number)."""
    numbers = _NUMBER.findall(prediction)
    right = sum(1 for number in numbers if number == target)
    return 0.0 if not numbers else float(right / len(numbers))


def count(prediction: str, truth: str, **_: Any) -> float:
    return _share_of(str(truth), prediction)


def _paragraph(pattern: str, truth: str) -> str:
    found = re.findall(pattern, truth)
    if not found:
        raise ValueError(f"the answer {truth!r} names no paragraph (expected {pattern!r})")
    return found[0]


def retrieval(prediction: str, truth: str, **_: Any) -> float:
    return _share_of(_paragraph(r"Paragraph (\d+)", truth), prediction)


def retrieval_zh(prediction: str, truth: str, **_: Any) -> float:
    return _share_of(_paragraph(r"段落(\d+)", truth), prediction)


def code_similarity(prediction: str, truth: str, **_: Any) -> float:
    """fuzzywuzzy's ``fuzz.ratio`` / 100 of the first code line (one without a backtick, ``#`` or
    ``//``) against the truth, on fuzzywuzzy's pure-Python back end, ``difflib.SequenceMatcher``:
    what LongBench's requirements install (python-Levenshtein is not among them)."""
    line = next(
        (
            line
            for line in prediction.lstrip("\n").split("\n")
            if not ("`" in line or "#" in line or "//" in line)
        ),
        "",
    )
    return _fuzz_ratio(line, truth) / 100


def _fuzz_ratio(first: str, second: str) -> int:
    """``fuzz.ratio``: 100 for equal strings, 0 when one is empty, else the rounded ratio."""
    if first == second:
        return 100
    if not first or not second:
        return 0
    return int(round(100 * difflib.SequenceMatcher(None, first, second).ratio()))


Metric = Callable[..., float]

#: eval.py's ``dataset2metric`` values, by the names :class:`cbench_longbench.tasks.Task` uses.
METRICS: dict[str, Metric] = {
    "qa_f1": qa_f1,
    "qa_f1_zh": qa_f1_zh,
    "rouge": rouge,
    "rouge_zh": rouge_zh,
    "classification": classification,
    "retrieval": retrieval,
    "retrieval_zh": retrieval_zh,
    "count": count,
    "code_sim": code_similarity,
}


def score(
    metric: str,
    prediction: str,
    answers: Iterable[str],
    *,
    all_classes: Sequence[str] | None = None,
    first_line: bool = False,
) -> float:
    """eval.py's ``scorer`` for one row: the first line when the task says so, the best answer."""
    if first_line:
        prediction = prediction.lstrip("\n").split("\n")[0]
    best = 0.0
    for truth in answers:
        best = max(best, METRICS[metric](prediction, truth, all_classes=all_classes))
    return best
