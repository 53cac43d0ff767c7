"""Gate rules for test worlds that run no independent evaluation.

The gate requires the independent pass@1 by default (the selection-time figure is biased low
by selection: the winner's curse); a curator may let it read the selection-time figure only
with a reason. Test worlds that exercise other rules build their benchmarks with this."""

SELECTION_TIME_OK = {
    "require_independent": False,
    "selection_time_reason": "test world: no independent evaluation is run",
}
