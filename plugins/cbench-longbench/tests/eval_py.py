"""THUDM's eval.py scoring loop, run as eval.py is run (``python eval_py.py``, the rows as JSON on
stdin, their scores as JSON on stdout): the module's frame calls ``scorer``, which calls the
task's metric, so that the ``rouge`` package reads its LCS back with the frames it has there.
The metrics other than ROUGE-L are tests/reference.py's.
"""

import json
import sys

import jieba
from reference import classification, code_similarity, number_share, qa_f1, qa_f1_zh, retrieval
from rouge import Rouge


def rouge_score(prediction, ground_truth, **kwargs):
    try:
        scores = Rouge().get_scores([prediction], [ground_truth], avg=True)
    except Exception:  # noqa: BLE001 - LongBench's bare except: anything raised scores 0.0
        return 0.0
    return scores["rouge-l"]["f"]


def rouge_zh_score(prediction, ground_truth, **kwargs):
    return rouge_score(
        " ".join(jieba.cut(prediction, cut_all=False)), " ".join(jieba.cut(ground_truth, cut_all=False))
    )


DATASET2METRIC = {
    "hotpotqa": lambda p, t, **k: qa_f1(p, t),
    "triviaqa": lambda p, t, **k: qa_f1(p, t),
    "multifieldqa_zh": lambda p, t, **k: qa_f1_zh(p, t),
    "gov_report": rouge_score,
    "samsum": rouge_score,
    "vcsum": rouge_zh_score,
    "trec": lambda p, t, **k: classification(p, t, k["all_classes"]),
    "lsht": lambda p, t, **k: classification(p, t, k["all_classes"]),
    "passage_retrieval_en": lambda p, t, **k: retrieval(p, t),
    "passage_retrieval_zh": lambda p, t, **k: retrieval(p, t, "段落"),
    "passage_count": lambda p, t, **k: number_share(p, t),
    "lcc": lambda p, t, **k: code_similarity(p, t),
}


def scorer(dataset, prediction, ground_truths, all_classes):
    score = 0.0
    if dataset in ["trec", "triviaqa", "samsum", "lsht"]:
        prediction = prediction.lstrip("\n").split("\n")[0]
    for ground_truth in ground_truths:
        score = max(score, DATASET2METRIC[dataset](prediction, ground_truth, all_classes=all_classes))
    return score


if __name__ == "__main__":
    jieba.setLogLevel(60)
    scores = []
    for row in json.load(sys.stdin):  # not a comprehension: that would be a frame eval.py has not
        scores.append(scorer(*row))
    print(json.dumps(scores))
