"""The state of the pair a benchmark run measured, from the cache-line round trips
osmp-bench timed before and after its measurement (`state:` line, JSON
line_rt_us and line_rt_after_us), and which state a set of runs is read in.

On a virtual machine whose host moves the two vCPUs between sockets (README
"Slow spells"), a run is "near" (both round trips below FAR_RT_US), "far" (both
above) or "changed" (one of each: the host moved the pair during the run). A
median over runs of different states describes no one machine, so bench/ab
--states reports them apart and bench/compare (merge.py) reads each comparison
in one state. Used by bench/ab, bench/merge.py and bench/summary.py.
"""

# Round trip (us) above which the pair is far apart (OSMP_PAIR_LATENCY's 150 ns one way).
FAR_RT_US = 0.3

STATES = ("near", "far", "changed")


def state_of(before, after=None):
    """'near', 'far' or 'changed' for a run's round trips (us); None when it timed none
    (oversubscribed runs do not time the line)."""
    rts = [x for x in (before, after) if isinstance(x, (int, float)) and x > 0]
    if not rts:
        return None
    return "near" if max(rts) < FAR_RT_US else "far" if min(rts) > FAR_RT_US else "changed"


def state_of_run(run):
    """The state of one osmp-bench --json run."""
    return state_of(run.get("line_rt_us"), run.get("line_rt_after_us"))


def pick(states_a, states_b):
    """The state to read a comparison of runs a against runs b in: of near and far, the one with
    the most runs on both sides (min of the two counts), near on a tie; None when no state has
    runs on both sides (the comparison then mixes states) or no run timed its state."""
    best, score = None, 0
    for s in ("near", "far"):
        k = min(states_a.count(s), states_b.count(s))
        if k > score:
            best, score = s, k
    return best
