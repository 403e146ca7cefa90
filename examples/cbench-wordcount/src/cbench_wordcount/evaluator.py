"""WordCountDiff: how long the response is beside its reference, in words, and how much it adds."""


class WordCountDiff:
    name = "word_count_diff"

    def score(self, original: dict, processed: dict) -> dict[str, float]:
        reference = original.get("wordcount_reference") or original.get("answer") or original.get("context")
        if not reference:
            return {}  # not a row this evaluator applies to
        words = str(reference).lower().split()
        said = str(processed.get("response") or "").lower().split()
        extra = sum(word not in words for word in said)
        return {
            "word_count_ratio": len(said) / len(words),
            "extra_words": extra / len(said) if said else 0.0,
        }
