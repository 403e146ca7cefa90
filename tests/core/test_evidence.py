"""Evidence retention: the share of a row's evidence passages the model's prompt still holds whole,
compared as the answer evaluators compare text."""

from __future__ import annotations

import pytest

from context_bench.evidence import dialog_passages, evidence_kept, passages

#: A HotpotQA-shaped row: two paragraphs, the supporting facts one sentence of each.
HOTPOT_CONTEXT = (
    "Scott Derrickson: Scott Derrickson (born July 16, 1966) is an American director, screenwriter and "
    "producer. He lives in Los Angeles, California.\n\n"
    "Ed Wood: Edward Davis Wood Jr. (October 10, 1924 – December 10, 1978) was an American filmmaker, "
    "actor, writer, producer, and director."
)
HOTPOT_FACTS = [
    "Scott Derrickson (born July 16, 1966) is an American director, screenwriter and producer.",
    "Edward Davis Wood Jr. (October 10, 1924 – December 10, 1978) was an American filmmaker, actor, "
    "writer, producer, and director.",
]
#: A LoCoMo-shaped row: evidence turns of a long conversation.
LOCOMO_TURNS = [
    "Caroline: I went to a LGBTQ support group yesterday and it was so powerful.",
    "Melanie: I painted a sunrise over the lake last year.",
]
LOCOMO_CONVERSATION = "\n".join(
    ["Melanie: Hey Caroline! Good to see you!", LOCOMO_TURNS[0], "Melanie: That's great!", LOCOMO_TURNS[1]]
)


def test_a_baseline_that_sends_everything_keeps_all_the_evidence():
    assert evidence_kept(HOTPOT_FACTS, HOTPOT_CONTEXT) == 1.0
    assert evidence_kept(LOCOMO_TURNS, LOCOMO_CONVERSATION) == 1.0


def test_a_compressor_that_drops_one_supporting_sentence_keeps_half():
    compressed = HOTPOT_CONTEXT.split("\n\n")[0]
    assert evidence_kept(HOTPOT_FACTS, compressed) == 0.5
    assert evidence_kept(LOCOMO_TURNS, LOCOMO_CONVERSATION.replace(LOCOMO_TURNS[1], "")) == 0.5
    assert evidence_kept(HOTPOT_FACTS, "Who directed Sinister?") == 0.0


def test_case_punctuation_articles_and_spacing_do_not_drop_a_passage():
    reflowed = "scott derrickson born july 16 1966 is american director   screenwriter and\nproducer"
    assert evidence_kept(HOTPOT_FACTS[:1], reflowed) == 1.0


def test_a_passage_with_a_word_dropped_or_changed_is_dropped():
    assert evidence_kept(HOTPOT_FACTS[:1], HOTPOT_CONTEXT.replace("screenwriter and ", "")) == 0.0
    assert evidence_kept(["the cat sat"], "concat sat on the mat") == 0.0  # whole words only
    assert evidence_kept(["cat sat"], "the cat sat on the mat") == 1.0


def test_a_needle_in_a_long_haystack():
    needle = "Actually, Yuki lives next to the Semper Opera House."
    haystack = " ".join(
        ["Filler sentence about nothing in particular."] * 2000 + [needle] + ["More filler."] * 10
    )
    assert evidence_kept([needle], haystack) == 1.0
    assert evidence_kept([needle], haystack.replace("Semper", "Sydney")) == 0.0


@pytest.mark.parametrize("passages", [[], [""], ["  ", "..."], ["the a an"]])
def test_a_row_without_evidence_has_no_retention_rather_than_a_perfect_one(passages):
    assert evidence_kept(passages, HOTPOT_CONTEXT) is None


def test_locomo_dialog_ids_read_as_their_turns_text():
    conversation = {
        "speaker_a": "Caroline",
        "session_1_date_time": "1:56 pm on 8 May, 2023",
        "session_1": [{"speaker": "Caroline", "dia_id": "D1:1", "text": "I adopted a puppy."}],
        "session_9": [{"speaker": "Melanie", "dia_id": "D9:17", "text": "I ran a marathon."}],
    }
    # LoCoMo writes a few ids in one string, and the odd one with a leading zero
    assert dialog_passages(["D1:1; D9:17", "D9:017"], conversation) == [
        "I adopted a puppy.",
        "I ran a marathon.",
        "I ran a marathon.",
    ]
    assert dialog_passages(["D1:1", "D2:1"], conversation) is None  # a turn the row lacks
    assert dialog_passages(["a passage of text"], conversation) == ["a passage of text"]
    assert passages({"evidence": ["D1:1"], "conversation": conversation}) == ["I adopted a puppy."]
    assert passages({"evidence": ["D1:1"]}) == []  # no turns to read it from: not checked
