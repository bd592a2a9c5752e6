# Every participant runs the same tests in the same order (pytest's order is
# fixed), so each test's collectives match across ranks. The team comes from
# osmp-run (osmp.init) or, with OSMP_TEST_MPI=1 under mpirun, from mpi4py's
# COMM_WORLD (Team.from_mpi).
import os

import pytest

import osmp


@pytest.fixture(scope="session")
def team():
    if os.environ.get("OSMP_TEST_MPI") == "1":
        from mpi4py import MPI

        t = osmp.Team.from_mpi(MPI.COMM_WORLD)
        yield t
        t.close()
    else:
        if "OSMP_RUN_FD" not in os.environ:
            pytest.skip("run under osmp-run (or mpirun with OSMP_TEST_MPI=1)")
        yield osmp.init()
