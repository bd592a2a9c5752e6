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
# A rank dies (SIGKILL) with requests outstanding everywhere: the job must end within the limit (not killed by
# the timeout: 124), and nothing be left in /dev/shm (expect-end.sh). Under Open MPI (--enable-recovery: the
# runtime lets the others run on, and then ends with status 0) each of the other three must also report the
# error its MPI_Waitall returned; Hydra ends an MPICH job as soon as a rank dies, usually before the others get
# there, so under MPICH the job's end (non-zero) is what is checked.
set(nb_dies ${CMAKE_CURRENT_SOURCE_DIR}/mpi/expect-end.sh 60 ${launch} 4)
if(flavor STREQUAL "OMPI")
  add_test(NAME mpi.${fl}-4-nonblocking-peer-dies
           COMMAND bash -c "out=$(\"$@\" 2>&1); printf '%s\\n' \"$out\"; st=$(printf '%s\\n' \"$out\" | sed -n 's/^expect-end: exit status \\([0-9]*\\) .*/\\1/p'); [ -n \"$st\" ] && [ \"$st\" -ne 124 ] && [ $(printf '%s\\n' \"$out\" | grep -c 'MPI_Waitall returned an error') -eq 3 ]"
                   peer-dies env ${pre} ${nb_dies} --enable-recovery $<TARGET_FILE:nb-check-${fl}> --die 2)
else()
  add_test(NAME mpi.${fl}-4-nonblocking-peer-dies COMMAND env ${pre} ${nb_dies} $<TARGET_FILE:nb-check-${fl}> --die 2)
endif()
