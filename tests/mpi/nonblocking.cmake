# Nonblocking collectives under libosmp_mpi: included once per MPI flavor from tests/CMakeLists.txt
# (variables there: flavor, fl, launch, pre).
#
# nb-check posts every MPI_I<op> (every root, several types, zero counts, in place) in batches of 40 and
# more outstanding requests, completes them every way MPI has (mixed with point-to-point requests,
# blocking collectives among them), and with --expect-osmp checks that each ran on OSMP.
add_executable(nb-check-${fl} mpi/nb-check.c)
target_link_libraries(nb-check-${fl} PRIVATE PkgConfig::${flavor} ${CMAKE_DL_LIBS})
foreach(n 2 3 4)
  add_test(NAME mpi.${fl}-${n}-nonblocking
           COMMAND env ${pre} timeout -k 5 280 ${launch} ${n} $<TARGET_FILE:nb-check-${fl}> --expect-osmp)
endforeach()
# Across (pseudo-)nodes every MPI_I<op> goes to MPI, the blocking calls among them stay on OSMP.
add_test(NAME mpi.${fl}-4-nonblocking-pseudo2
         COMMAND env ${pre} OSMP_MPI_PSEUDO_NODES=2 timeout -k 5 280 ${launch} 4 $<TARGET_FILE:nb-check-${fl}> --expect-osmp)
