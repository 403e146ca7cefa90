"""An example context-bench plugin: WordCountDiff and the wordcount data set."""
