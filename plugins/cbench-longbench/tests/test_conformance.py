"""LongBenchScore and SubspanEM agree with the official definitions on every generated pair.

For each metric family, English and Chinese where LongBench has both, 2,000 seeded (prediction,
answers) pairs, multi-line and punctuation-heavy, are scored through the evaluator (so the task's
first-line rule and the maximum over answers are part of what is checked) and by tests/reference.py.
"""

from __future__ import annotations

import random

import pytest

from cbench_longbench.evaluator import LongBenchScore, v2_choice
from cbench_longbench.subspan import SubspanEM

PAIRS = 2000

_EN = (
    "the a an The A Paris France river Seine tower built in 1889 by Gustave Eiffel's company "
    "it is was city capital of and or not NOT Röntgen naïve café the\u0301 an\u0308 A-B x_y 42 7 "
    "2,000 3.5 one two x\u0301 e\u0301"
).split()
_PUNCT = list(".,;:!?'\"()[]{}-—…/\\*#`~@$%^&_=+<>|") + ["...", "!!", "?!", " .", ". "]
_ZH = (
    "中国 北京 会议 预算 增加 我们 认为 需要 讨论 经济 发展 城市 长城 位于 古代 工程 的 了 是 在 和 "
    "主持人 成员 总结 问题 答案 科技 体育 新闻 财经"
).split()
_ZH_PUNCT = list("，。！？：；“”（）《》、…—·") + [".", " ", "\t"]
_TREC = [
    "Other",
    "location",
    "Animal",
    "Other animal",
    "City",
    "Other location",
    "Location",
    "Date",
    "Other",
    "Individual",
    "Group or organization",
    "State",
]
_LSHT = ["体育", "新闻", "体育新闻", "财经", "国际财经", "国际", "科技", "科技新闻", "教育"]


def _words(rng: random.Random, vocab: list[str], marks: list[str], low: int, high: int, sep: str) -> str:
    parts = []
    for _ in range(rng.randint(low, high)):
        parts.append(rng.choice(vocab))
        if rng.random() < 0.3:
            parts.append(rng.choice(marks))
    return sep.join(parts)


def _lines(rng: random.Random, make, count: int = 3) -> str:
    """Up to ``count`` lines, sometimes led by newlines or spaces, sometimes blank ones between."""
    lines = [make() if rng.random() < 0.85 else "" for _ in range(rng.randint(1, count))]
    lead = rng.choice(["", "", "\n", "\n\n", " ", "\n \n"])
    return lead + rng.choice(["\n", "\n\n", " \n"]).join(lines)


def _english(rng: random.Random, low: int = 1, high: int = 12) -> str:
    return _words(rng, _EN, _PUNCT, low, high, " ")


def _chinese(rng: random.Random, low: int = 1, high: int = 15) -> str:
    sep = rng.choice(["", "", " "])
    return _words(rng, _ZH + ["AI", "2024", "３"], _ZH_PUNCT, low, high, sep)


def _prediction_for(rng: random.Random, answers: list[str], text) -> str:
    """A prediction that often quotes an answer, among other lines and marks."""
    if rng.random() < 0.5:
        return _lines(rng, text)
    quoted = rng.choice(answers)
    return _lines(rng, lambda: rng.choice([quoted, text() + " " + quoted, quoted + rng.choice(_PUNCT)]))


def _qa(rng: random.Random, text) -> tuple[str, list[str], None]:
    answers = [text(rng) for _ in range(rng.randint(1, 3))]
    return _prediction_for(rng, answers, lambda: text(rng)), answers, None


def _summary(rng: random.Random, text) -> tuple[str, list[str], None]:
    answers = [text(rng, 0, 20) for _ in range(rng.randint(1, 2))]
    return _prediction_for(rng, answers, lambda: text(rng, 0, 20)), answers, None


def _classes(rng: random.Random, names: list[str]) -> tuple[str, list[str], list[str]]:
    truth = rng.choice(names)
    mentioned = rng.sample(names, rng.randint(0, 6))
    noise = rng.choice([_english(rng, 0, 3), _chinese(rng, 0, 3)])
    line = rng.choice([", ", " or ", "\n", "", " "]).join([*mentioned, noise])
    return _lines(rng, lambda: line, 2), [truth], names


def _paragraph(rng: random.Random, marker: str) -> tuple[str, list[str], None]:
    target = rng.randint(1, 30)
    digits = [str(rng.randint(0, 40)) for _ in range(rng.randint(0, 4))] + ["１２", "٣", str(target)]
    words = [
        rng.choice([f"{marker}{d}", d, f"{marker}{d}{rng.choice(_PUNCT)}", _english(rng, 0, 2)])
        for d in digits
    ]
    rng.shuffle(words)
    return (
        _lines(rng, lambda: " ".join(rng.sample(words, rng.randint(0, len(words)))), 2),
        [f"{marker}{target}"],
        None,
    )


def _count(rng: random.Random) -> tuple[str, list[str], None]:
    truth = str(rng.randint(0, 30))
    numbers = [rng.choice([truth, str(rng.randint(0, 30)), "０", "1２"]) for _ in range(rng.randint(0, 4))]
    return _lines(rng, lambda: " ".join([*numbers, _english(rng, 0, 3)]), 2), [truth], None


def _code(rng: random.Random) -> tuple[str, list[str], None]:
    truth = rng.choice(
        ["    return total", "x = foo(a, b)  # add", "for i in range(10):", "}", "", "a" * 250]
    )

    def line() -> str:
        kind = rng.random()
        if kind < 0.3:
            return truth
        if kind < 0.5:
            chars = list(truth)
            for _ in range(rng.randint(1, 4)):
                chars.insert(rng.randint(0, len(chars)), rng.choice("abc ()#/`:_"))
            return "".join(chars)
        if kind < 0.7:
            return rng.choice(["```python", "# comment", "// note", "`x`"])
        return _english(rng, 0, 40 if rng.random() < 0.1 else 6)

    return _lines(rng, line, 4), [truth], None


#: (task, generator, language) per metric family.
FAMILIES = {
    "qa_f1 en": [("hotpotqa", lambda r: _qa(r, _english)), ("triviaqa", lambda r: _qa(r, _english))],
    "qa_f1 zh": [("multifieldqa_zh", lambda r: _qa(r, _chinese))],
    "rouge en": [
        ("gov_report", lambda r: _summary(r, _english)),
        ("samsum", lambda r: _summary(r, _english)),
    ],
    "rouge zh": [("vcsum", lambda r: _summary(r, _chinese))],
    "classification en": [("trec", lambda r: _classes(r, _TREC))],
    "classification zh": [("lsht", lambda r: _classes(r, _LSHT))],
    "retrieval en": [("passage_retrieval_en", lambda r: _paragraph(r, "Paragraph "))],
    "retrieval zh": [("passage_retrieval_zh", lambda r: _paragraph(r, "段落"))],
    "count": [("passage_count", _count)],
    "code edit similarity": [("lcc", _code)],
}


@pytest.mark.slow
@pytest.mark.parametrize("family", list(FAMILIES))
def test_longbench_score_agrees_with_the_official_scorer_on_every_pair(family, reference):
    rng = random.Random(f"longbench {family}")
    evaluator = LongBenchScore()
    tasks = FAMILIES[family]
    rows, ours = [], []
    for number in range(PAIRS):
        task, generate = tasks[number % len(tasks)]
        prediction, answers, classes = generate(rng)
        row = {"dataset": f"longbench:{task}", "answers": answers, "all_classes": classes}
        ours.append(evaluator.score(row, {"response": prediction})["longbench_score"])
        rows.append((task, prediction, answers, classes))
    official = reference.eval_py(rows)
    assert len(official) == len(ours) == PAIRS
    for mine, theirs, row in zip(ours, official, rows, strict=True):
        assert mine == pytest.approx(theirs, abs=1e-9), row
    assert len({round(value, 6) for value in official}) > 2 and 0.0 in official  # more than right and wrong


@pytest.mark.slow
@pytest.mark.parametrize("dataset", ["nq-multidoc:20", "meetingbank-qa"])
def test_subspan_em_agrees_with_the_papers_definition_on_every_pair(dataset, reference):
    rng = random.Random(f"subspan {dataset}")
    evaluator = SubspanEM()
    hits = 0
    for _ in range(PAIRS):
        prediction, answers, _ = _qa(rng, _english)
        ours = evaluator.score({"dataset": dataset, "answers": answers}, {"response": prediction})
        if dataset == "meetingbank-qa":
            prediction = prediction.lstrip("\n")  # LLMLingua-2's evaluate_with_gt
        official = reference.subspan_em(prediction.split("\n")[0].strip(), answers)
        assert ours == {"subspan_em": official}, (prediction, answers)
        hits += official == 1.0
    assert 0 < hits < PAIRS


def test_long_sentences_give_out_where_the_rouge_packages_recursion_does(reference):
    """The ``rouge`` package reads its LCS back recursively: past the frames eval.py leaves it,
    the RecursionError it raises is caught and the row scores 0.0 (English from 992 frames on,
    Chinese, one frame deeper in eval.py, from 991)."""
    evaluator = LongBenchScore()
    cases = [(words, task) for words in (988, 989, 990) for task in ("gov_report", "vcsum")]
    rows = [(task, "x " + " ".join(f"w{i}" for i in range(words)), ["x"], None) for words, task in cases]
    official = reference.eval_py(rows)
    ours = [
        evaluator.score({"dataset": f"longbench:{task}", "answers": answers}, {"response": prediction})
        for task, prediction, answers, _ in rows
    ]
    assert [score > 0 for score in official] == [True, True, True, False, False, False]
    assert [score["longbench_score"] for score in ours] == pytest.approx(official, abs=1e-9)


def test_v2_reads_the_answer_as_pred_py_does():
    assert v2_choice("**The correct answer is (B)**") == "B"
    assert v2_choice("The correct answer is C, not (A).") == "C"
    assert v2_choice("The correct answer is (E). The correct answer is D") == "D"
    assert v2_choice("the correct answer is (A)") is None
    assert v2_choice("Answer: A") is None
