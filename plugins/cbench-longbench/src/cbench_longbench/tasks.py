"""LongBench's 21 tasks as THUDM publishes them: each task's prompt template
(``config/dataset2prompt.json``), maximum new tokens (``config/dataset2maxlen.json``), the metric
``eval.py`` scores it with, its language, and whether only the prediction's first line is scored.

The templates are the official text, character for character (typos such as "asconcisely" kept:
they are the protocol); tests/fixtures/official holds THUDM's files and a test holds them equal.
"""

from __future__ import annotations

import attrs


@attrs.frozen
class Task:
    """One LongBench task: what is sent (``template``, ``max_tokens``) and how it is scored."""

    name: str
    #: A key of :data:`cbench_longbench.metrics.METRICS`.
    metric: str
    max_tokens: int
    language: str
    #: ``str.format`` template with ``{context}`` and ``{input}``, as ``pred.py`` fills it.
    template: str
    #: eval.py scores only the first line of the prediction (after leading newlines) for these.
    first_line: bool = False

    def prompt(self, context: str, question: str) -> str:
        return self.template.format(context=context, input=question)


#: The multi-hop tasks' template (hotpotqa, 2wikimqa and musique share it).
_MULTI_HOP = (
    "Answer the question based on the given passages. Only give me the answer and do not "
    "output any other words.\n\n"
    "The following are given passages.\n{context}\n\n"
    "Answer the question based on the given passages. Only give me the answer and do not "
    "output any other words.\n\n"
    "Question: {input}\nAnswer:"
)

_TASKS = [
    Task(
        "narrativeqa",
        "qa_f1",
        128,
        "en",
        (
            "You are given a story, which can be either a novel or a movie script, and a "
            "question. Answer the question asconcisely as you can, using a single phrase if "
            "possible. Do not provide any explanation.\n\n"
            "Story: {context}\n\n"
            "Now, answer the question based on the story asconcisely as you can, using a single "
            "phrase if possible. Do not provide any explanation.\n\n"
            "Question: {input}\n\n"
            "Answer:"
        ),
    ),
    Task(
        "qasper",
        "qa_f1",
        128,
        "en",
        (
            "You are given a scientific article and a question. Answer the question as concisely "
            "as you can, using a single phrase or sentence if possible. If the question cannot "
            'be answered based on the information in the article, write "unanswerable". If the '
            'question is a yes/no question, answer "yes", "no", or "unanswerable". Do not '
            "provide any explanation.\n\n"
            "Article: {context}\n\n"
            " Answer the question based on the above article as concisely as you can, using a "
            "single phrase or sentence if possible. If the question cannot be answered based on "
            'the information in the article, write "unanswerable". If the question is a yes/no '
            'question, answer "yes", "no", or "unanswerable". Do not provide any explanation.\n\n'
            "Question: {input}\n\n"
            "Answer:"
        ),
    ),
    Task(
        "multifieldqa_en",
        "qa_f1",
        64,
        "en",
        (
            "Read the following text and answer briefly.\n\n"
            "{context}\n\n"
            "Now, answer the following question based on the above text, only give me the answer "
            "and do not output any other words.\n\n"
            "Question: {input}\nAnswer:"
        ),
    ),
    Task(
        "multifieldqa_zh",
        "qa_f1_zh",
        64,
        "zh",
        (
            "阅读以下文字并用中文简短回答：\n\n"
            "{context}\n\n"
            "现在请基于上面的文章回答下面的问题，只告诉我答案，不要输出任何其他字词。\n\n"
            "问题：{input}\n回答："
        ),
    ),
    Task("hotpotqa", "qa_f1", 32, "en", _MULTI_HOP),
    Task("2wikimqa", "qa_f1", 32, "en", _MULTI_HOP),
    Task("musique", "qa_f1", 32, "en", _MULTI_HOP),
    Task(
        "dureader",
        "rouge_zh",
        128,
        "zh",
        (
            "请基于给定的文章回答下述问题。\n\n"
            "文章：{context}\n\n"
            "请基于上述文章回答下面的问题。\n\n"
            "问题：{input}\n回答："
        ),
    ),
    Task(
        "gov_report",
        "rouge",
        512,
        "en",
        (
            "You are given a report by a government agency. Write a one-page summary of the "
            "report.\n\n"
            "Report:\n{context}\n\n"
            "Now, write a one-page summary of the report.\n\n"
            "Summary:"
        ),
    ),
    Task(
        "qmsum",
        "rouge",
        512,
        "en",
        (
            "You are given a meeting transcript and a query containing a question or "
            "instruction. Answer the query in one or more sentences.\n\n"
            "Transcript:\n{context}\n\n"
            "Now, answer the query based on the above meeting transcript in one or more "
            "sentences.\n\n"
            "Query: {input}\nAnswer:"
        ),
    ),
    Task(
        "multi_news",
        "rouge",
        512,
        "en",
        (
            "You are given several news passages. Write a one-page summary of all news. \n\n"
            "News:\n{context}\n\n"
            "Now, write a one-page summary of all the news.\n\n"
            "Summary:"
        ),
    ),
    Task(
        "vcsum",
        "rouge_zh",
        512,
        "zh",
        ("下面有一段会议记录，请你阅读后，写一段总结，总结会议的内容。\n会议记录：\n{context}\n\n会议总结："),
    ),
    Task(
        "trec",
        "classification",
        64,
        "en",
        (
            "Please determine the type of the question below. Here are some examples of "
            "questions.\n\n"
            "{context}\n{input}"
        ),
        first_line=True,
    ),
    Task(
        "triviaqa",
        "qa_f1",
        32,
        "en",
        (
            "Answer the question based on the given passage. Only give me the answer and do not "
            "output any other words. The following are some examples.\n\n"
            "{context}\n\n"
            "{input}"
        ),
        first_line=True,
    ),
    Task(
        "samsum",
        "rouge",
        128,
        "en",
        (
            "Summarize the dialogue into a few short sentences. The following are some "
            "examples.\n\n"
            "{context}\n\n"
            "{input}"
        ),
        first_line=True,
    ),
    Task(
        "lsht",
        "classification",
        64,
        "zh",
        ("请判断给定新闻的类别，下面是一些例子。\n\n{context}\n{input}"),
        first_line=True,
    ),
    Task(
        "passage_count",
        "count",
        32,
        "en",
        (
            "There are some paragraphs below sourced from Wikipedia. Some of them may be "
            "duplicates. Please carefully read these paragraphs and determine how many unique "
            "paragraphs there are after removing duplicates. In other words, how many "
            "non-repeating paragraphs are there in total?\n\n"
            "{context}\n\n"
            "Please enter the final count of unique paragraphs after removing duplicates. The "
            "output format should only contain the number, such as 1, 2, 3, and so on.\n\n"
            "The final answer is: "
        ),
    ),
    Task(
        "passage_retrieval_en",
        "retrieval",
        32,
        "en",
        (
            "Here are 30 paragraphs from Wikipedia, along with an abstract. Please determine "
            "which paragraph the abstract is from.\n\n"
            "{context}\n\n"
            "The following is an abstract.\n\n"
            "{input}\n\n"
            "Please enter the number of the paragraph that the abstract is from. The answer "
            'format must be like "Paragraph 1", "Paragraph 2", etc.\n\n'
            "The answer is: "
        ),
    ),
    Task(
        "passage_retrieval_zh",
        "retrieval_zh",
        32,
        "zh",
        (
            "以下是若干段落文字，以及其中一个段落的摘要。请确定给定的摘要出自哪一段。\n\n"
            "{context}\n\n"
            "下面是一个摘要\n\n"
            "{input}\n\n"
            '请输入摘要所属段落的编号。答案格式必须是"段落1"，"段落2"等格式\n\n'
            "答案是："
        ),
    ),
    Task(
        "lcc", "code_sim", 64, "en", ("Please complete the code given below. \n{context}Next line of code:\n")
    ),
    Task(
        "repobench-p",
        "code_sim",
        64,
        "en",
        ("Please complete the code given below. \n{context}{input}Next line of code:\n"),
    ),
]

#: The 21 LongBench tasks by name, in the order of THUDM's files.
TASKS: dict[str, Task] = {task.name: task for task in _TASKS}

#: The 13 tasks LongBench-E samples evenly over lengths 0-4k, 4-8k and 8k+ (``<task>_e`` configs).
LONGBENCH_E = (
    "qasper",
    "multifieldqa_en",
    "hotpotqa",
    "2wikimqa",
    "gov_report",
    "multi_news",
    "trec",
    "triviaqa",
    "samsum",
    "passage_count",
    "passage_retrieval_en",
    "lcc",
    "repobench-p",
)
