"""Chinese words as LongBench cuts them: jieba's accurate mode with its default dictionary and HMM.

jieba builds its prefix dictionary on first use (about a second; it caches it in the temporary
directory) and logs that at debug level to stderr, which is silenced here: a run's log is not the
place for it.
"""

from __future__ import annotations

import functools
import logging
from typing import Any


@functools.cache
def _jieba() -> Any:
    import jieba

    jieba.setLogLevel(logging.WARNING)
    jieba.initialize()
    return jieba


def words(text: str) -> list[str]:
    """``list(jieba.cut(text, cut_all=False))``."""
    return list(_jieba().cut(text, cut_all=False))
