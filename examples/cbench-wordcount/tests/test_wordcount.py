from cbench_wordcount import plugin
from cbench_wordcount.dataset import load_wordcount
from cbench_wordcount.evaluator import WordCountDiff

from context_bench.testing import check_evaluator, check_plugin, isolated_host, scored_by_name


def test_registers():
    info = check_plugin(plugin)  # on an isolated host, strict; factories and loaders resolve
    assert [e.name for e in info.evaluators] == ["WordCountDiff"]
    assert [d.name for d in info.datasets] == ["wordcount"]


def test_scores():
    scores = check_evaluator(WordCountDiff(), {"answer": "a b"}, {"response": "a c"})
    assert scores == {"word_count_ratio": 1.0, "extra_words": 0.5}
    assert WordCountDiff().score({}, {"response": "x"}) == {}  # no reference: not its row


def test_the_shipped_data_set_is_scored_by_name():
    row = load_wordcount()[0]
    names, scores = scored_by_name("wordcount", row, "on the mat", host=isolated_host(plugin))
    assert names == ["AnswerQuality", "WordCountDiff"]
    assert scores["exact_match"] == 1.0 and scores["word_count_ratio"] == 1.0 and scores["extra_words"] == 0.0
