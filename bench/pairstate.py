"""The state of the pair a benchmark run measured, from the cache-line round trips
osmp-bench timed before and after its measurement (`state:` line, JSON
line_rt_us and line_rt_after_us), and which state a set of runs is read in.

On a virtual machine whose host moves the two vCPUs (README "Slow spells"), a
run is "siblings" (both round trips below SIBLINGS_RT_US: the host put the two
vCPUs on the hyperthreads of one physical core, which share its L1, L2 and
execution units: on this host 0.030-0.034 us, and copies by both ranks at once
then share one core), "near" (both below FAR_RT_US: two cores of one package,
0.06-0.10 us here), "far" (both above: different packages, 0.36-0.58 us) or
"changed" (the two in different bands: the host moved the pair during the
run). A median over runs of different states describes no one machine (one
1 MiB allgather took 175 us per call in both sibling runs of a sitting and
109-118 us in its near runs: results of bench/compare show it per run), so
bench/ab --states reports them apart and bench/compare (merge.py) reads each
comparison in one state. Used by bench/ab, bench/merge.py and bench/summary.py.
"""

# Round trip (us) above which the pair is far apart (OSMP_PAIR_LATENCY's 150 ns one way).
FAR_RT_US = 0.3
# Round trip (us) below which the two share one physical core (measured here; see above).
SIBLINGS_RT_US = 0.045

STATES = ("near", "siblings", "far", "changed")


def band(rt):
    return "siblings" if rt < SIBLINGS_RT_US else "near" if rt < FAR_RT_US else "far"


def state_of(before, after=None):
    """'siblings', 'near', 'far' or 'changed' for a run's round trips (us); None when it timed
    none (oversubscribed runs do not time the line)."""
    bands = {band(x) for x in (before, after) if isinstance(x, (int, float)) and x > 0}
    if not bands:
        return None
    return bands.pop() if len(bands) == 1 else "changed"


def round_trips(run):
    """The round trips (us) one osmp-bench --json run timed, before and after its measurement: none, one or two."""
    return [x for x in (run.get("line_rt_us"), run.get("line_rt_after_us")) if isinstance(x, (int, float)) and x > 0]


def state_of_run(run):
    """The state of one osmp-bench --json run."""
    return state_of(*round_trips(run)) if round_trips(run) else None


def pick(states_a, states_b):
    """The state to read a comparison of runs a against runs b in: of near, siblings and far, the
    one with the most runs on both sides (min of the two counts), in that order on a tie; None
    when no state has runs on both sides (the comparison then mixes states) or no run timed its
    state."""
    best, score = None, 0
    for s in ("near", "siblings", "far"):
        k = min(states_a.count(s), states_b.count(s))
        if k > score:
            best, score = s, k
    return best
