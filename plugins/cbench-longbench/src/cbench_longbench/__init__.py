"""cbench-longbench: LongBench, LongBench-E and v2, Lost in the Middle, MeetingBank and ZeroSCROLLS,
prompted and scored as their papers' code does (docs/longbench.md)."""
