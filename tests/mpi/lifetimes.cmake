# MPI objects freed while requests use them, under libosmp_mpi: included once per MPI flavor from
# tests/CMakeLists.txt (variables there: flavor, fl, launch, pre).
#
# lifetime-check posts every MPI_I<op> (and makes every persistent one) on one communicator, frees the datatype,
# the user-defined operation and the communicator right after, completes them (persistent: three rounds), checks
# every int (the datatypes' holes too) and with --expect-osmp where each call ran; then a team that outlives its
# communicator for persistent requests (osmp_mpi_stat's "teams").
add_executable(lifetime-check-${fl} mpi/lifetime-check.c)
target_link_libraries(lifetime-check-${fl} PRIVATE PkgConfig::${flavor} ${CMAKE_DL_LIBS})
foreach(n 2 3 4)
  add_test(NAME mpi.${fl}-${n}-lifetimes
           COMMAND env ${pre} timeout -k 5 280 ${launch} ${n} $<TARGET_FILE:lifetime-check-${fl}> --expect-osmp)
endforeach()
# Across (pseudo-)nodes the calls go to MPI: the datatypes and operations are freed all the same.
add_test(NAME mpi.${fl}-4-lifetimes-pseudo2
         COMMAND env ${pre} OSMP_MPI_PSEUDO_NODES=2 timeout -k 5 280 ${launch} 4 $<TARGET_FILE:lifetime-check-${fl}> --expect-osmp)
