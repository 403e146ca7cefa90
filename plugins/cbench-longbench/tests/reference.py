"""The official definitions, as the conformance tests compute them: metrics written afresh from
their published formulas, except where a reference package is the definition itself (the ``rouge``
package, fuzzywuzzy on difflib, jieba), and THUDM's eval.py scorer over them (tests/eval_py.py).
Independent of the plugin's code: the tests compare the two on generated pairs.
"""

from __future__ import annotations

import difflib
import json
import re
import string
import subprocess
import sys
import warnings
from collections import Counter
from pathlib import Path

import jieba
import regex

with warnings.catch_warnings():  # "Using slow pure-python SequenceMatcher": the back end we match
    warnings.simplefilter("ignore")
    from fuzzywuzzy import fuzz

# LongBench's requirements install fuzzywuzzy without python-Levenshtein: its difflib back end.
fuzz.SequenceMatcher = difflib.SequenceMatcher

_DELETE = str.maketrans("", "", string.punctuation)
_ZH_MARKS = (
    "！？｡。＂＃＄％＆＇（）＊＋，－／：；＜＝＞＠［＼］＾＿｀｛｜｝～"
    "｟｠｢｣､、〃》「」『』【】〔〕〖〗〘〙〚〛〜〝〞〟〰〾〿–—‘’‛“”„‟…‧﹏."
)
_ZH_DELETE = str.maketrans("", "", string.punctuation + _ZH_MARKS)


def squad_normalize(text: str) -> str:
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text.lower().translate(_DELETE)).split())


def multiset_f1(predicted: list[str], truth: list[str]) -> float:
    shared = Counter(predicted) & Counter(truth)
    same = sum(shared.values())
    if not same:
        return 0.0
    precision, recall = same / len(predicted), same / len(truth)
    return 2 * precision * recall / (precision + recall)


def qa_f1(prediction: str, truth: str) -> float:
    return multiset_f1(squad_normalize(prediction).split(), squad_normalize(truth).split())


def qa_f1_zh(prediction: str, truth: str) -> float:
    def tokens(text: str) -> list[str]:
        cut = ("".join(word.lower().translate(_ZH_DELETE).split()) for word in jieba.cut(text, cut_all=False))
        return [word for word in cut if word]

    return multiset_f1(tokens(prediction), tokens(truth))


def classification(prediction: str, truth: str, all_classes: list[str]) -> float:
    """Removal while iterating, spelled out: a list iterator moves to the next index even when the
    item it stood on was removed, so the item after each removed one is never examined."""
    matches = [name for name in all_classes if name in prediction]
    index = 0
    while index < len(matches):
        name = matches[index]
        if name in truth and name != truth:
            del matches[matches.index(name)]
        index += 1
    return 1.0 / len(matches) if truth in matches else 0.0


def number_share(prediction: str, target: str) -> float:
    numbers = re.findall(r"\d+", prediction)
    return sum(number == target for number in numbers) / len(numbers) if numbers else 0.0


def retrieval(prediction: str, truth: str, marker: str = "Paragraph ") -> float:
    return number_share(prediction, re.findall(marker + r"(\d+)", truth)[0])


def code_similarity(prediction: str, truth: str) -> float:
    lines = prediction.lstrip("\n").split("\n")
    code = [line for line in lines if "`" not in line and "#" not in line and "//" not in line]
    return fuzz.ratio(code[0] if code else "", truth) / 100


def eval_py(rows: list[tuple[str, str, list[str], list[str] | None]]) -> list[float]:
    """eval.py's score of each (task, prediction, answers, all_classes), computed by
    tests/eval_py.py run as eval.py runs: a script of its own, so that the ``rouge`` package's
    recursion has the frames it has there (its depth decides which long sentences score 0.0)."""
    script = Path(__file__).with_name("eval_py.py")
    done = subprocess.run(
        [sys.executable, str(script)], input=json.dumps(rows), capture_output=True, text=True, check=True
    )
    return json.loads(done.stdout)


def subspan_em(prediction: str, answers: list[str]) -> float:
    """Lost in the Middle's ``best_subspan_em``: the SQuAD normalization with ``regex``'s ``\\b``."""

    def normal(text: str) -> str:
        return " ".join(regex.sub(r"\b(a|an|the)\b", " ", text.lower().translate(_DELETE)).split())

    return float(any(normal(answer).lower() in normal(prediction).lower() for answer in answers))


# ZeroSCROLLS (Shaham et al., 2023, §3.3), written afresh from the paper's formulas and the SCROLLS
# metric it extends; rouge-score's tokenizer as its README states it (lower case, runs of anything
# but a-z0-9 are separators), Unidecode for the transliteration the paper names.


def rouge_tokens(text: str) -> list[str]:
    return [token for token in re.split(r"[^a-z0-9]+", text.lower()) if token]


def _f(overlap: int, predicted: int, truth: int) -> float:
    precision, recall = overlap / max(predicted, 1), overlap / max(truth, 1)
    return 0.0 if precision + recall == 0 else 2 * precision * recall / (precision + recall)


def rouge_n(prediction: str, reference: str, n: int) -> float:
    def grams(tokens: list[str]) -> Counter:
        return Counter(tuple(tokens[i : i + n]) for i in range(len(tokens) - n + 1))

    ours, theirs = grams(rouge_tokens(prediction)), grams(rouge_tokens(reference))
    return _f(sum((ours & theirs).values()), sum(ours.values()), sum(theirs.values()))


def rouge_lcs(prediction: str, reference: str) -> float:
    ours, theirs = rouge_tokens(prediction), rouge_tokens(reference)
    if not ours or not theirs:
        return 0.0
    previous = [0] * (len(theirs) + 1)
    for word in ours:
        current = [0]
        for j, other in enumerate(theirs, start=1):
            current.append(previous[j - 1] + 1 if word == other else max(previous[j], current[j - 1]))
        previous = current
    return _f(previous[-1], len(ours), len(theirs))


def zeroscrolls_rouge(prediction: str, references: list[str]) -> dict[str, float]:
    """Each type's best over the references, then their geometric mean (the paper's R_geo)."""
    best = {
        "rouge1": max(rouge_n(prediction, reference, 1) for reference in references),
        "rouge2": max(rouge_n(prediction, reference, 2) for reference in references),
        "rougeL": max(rouge_lcs(prediction, reference) for reference in references),
    }
    return {"zeroscrolls_score": (best["rouge1"] * best["rouge2"] * best["rougeL"]) ** (1 / 3), **best}


def zeroscrolls_f1(prediction: str, references: list[str]) -> float:
    from unidecode import unidecode

    def tokens(text: str) -> list[str]:
        return squad_normalize(unidecode(text)).split()

    return max(multiset_f1(tokens(prediction), tokens(reference)) for reference in references)


def exponential_similarity(gold: float, predicted: float) -> float:
    """ES(p, p̂) = d ** (-c |p - p̂|), d = 2, c = 10, percentages as fractions."""
    return 2.0 ** (-10 * abs(gold / 100 - predicted / 100))


def concordance_index(predicted: list[str], gold: list[str]) -> float:
    """Pairs of positions in the prediction whose summaries the gold orders the same way, over C(n, 2)."""
    if sorted(predicted) != sorted(gold):
        return 0.0
    rank = {identifier: number for number, identifier in enumerate(gold)}
    n = len(predicted)
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    return sum(rank[predicted[i]] < rank[predicted[j]] for i, j in pairs) / len(pairs) if pairs else 1.0
