/*
 * libosmp_mpi: the tune table's "mpi" rules. The team (osmp_team_choice) says
 * which calls the tune table osmp-tune wrote on this machine gives to the MPI
 * library (docs/tuning.md); those go to MPI (reason R_TUNED). Every
 * participant of a team agreed on its table at creation, so every rank takes
 * the same decision (as the other reasons to pass require). Without a table,
 * every eligible call runs on OSMP.
 */
#include "mpi/osmp_mpi.h"

OSMP_MPI_TLS struct osmp__mpi_band osmp__mpi_band[OSMP_COLL_COUNT];

int osmp__mpi_tuned_slow(osmp_coll_t c, long bytes, osmp_team_t team)
{
    struct osmp_choice ch;
    uint32_t destroyed = osmp__load32(&osmp__mpi_teams_destroyed);
    if (bytes < 0 || osmp_team_choice(team, c, (size_t)bytes, &ch) != OSMP_OK) return 0;
    int to_mpi = ch.name[0] == 'm' && ch.name[1] == 'p' && ch.name[2] == 'i' && !ch.name[3];
    /* The band (osmp_mpi.h): every size of which gets the same answer. */
    long lo = (long)(ch.lo > (size_t)LONG_MAX ? LONG_MAX : ch.lo), hi = (long)(ch.hi > (size_t)LONG_MAX ? LONG_MAX : ch.hi);
    osmp__mpi_band[c] = (struct osmp__mpi_band){team, destroyed, to_mpi, lo, hi};
    return to_mpi;
}
