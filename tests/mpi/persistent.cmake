# Persistent collectives under libosmp_mpi (MPI_<op>_init under MPICH 4, MPIX_<op>_init under Open MPI 4.1):
# included once per MPI flavor from tests/CMakeLists.txt (variables there: flavor, fl, launch, pre).
#
# persist-check makes every persistent collective (every root, several types, zero counts with NULL buffers, in
# place), starts them together round after round with other inputs each time (persistent and nonblocking
# point-to-point requests among them), completes each round in another of MPI's ways, checks every value, and with
# --expect-osmp that each start ran on OSMP (a count per start).
add_executable(persist-check-${fl} mpi/persist-check.c)
target_link_libraries(persist-check-${fl} PRIVATE PkgConfig::${flavor} ${CMAKE_DL_LIBS})
foreach(n 2 3 4)
  add_test(NAME mpi.${fl}-${n}-persistent
           COMMAND env ${pre} timeout -k 5 280 ${launch} ${n} $<TARGET_FILE:persist-check-${fl}> --expect-osmp)
endforeach()
# Across (pseudo-)nodes every persistent collective goes to MPI (a count per _init).
add_test(NAME mpi.${fl}-4-persistent-pseudo2
         COMMAND env ${pre} OSMP_MPI_PSEUDO_NODES=2 timeout -k 5 280 ${launch} 4 $<TARGET_FILE:persist-check-${fl}> --expect-osmp)
