# MPI's progress rule with libosmp_mpi, both ways (issues 45 and 49): included once per MPI flavor from
# tests/CMakeLists.txt (variables there: flavor, fl, launch, pre).
#
# progress-check's cases (its header says what each does): a rank waits inside OSMP (a blocking collective, each
# in turn; the completion of an OSMP request in every way MPI has) while its peer's MPI call (a rendezvous send,
# a receive, a passive-target RMA epoch) needs that rank's MPI library; and issue 45's program, where each rank's
# part of an MPI_Iallgather must advance while the rank is blocked in MPI_Send. Exact data; --expect-osmp: every
# collective ran on OSMP (osmp_mpi_stat). Each rank gives up after --limit seconds ("no progress ... (in STEP)"),
# in-time.sh kills what is left at its own limit and cleans /dev/shm: a hang fails here, not by the suite's timeout.
add_executable(progress-check-${fl} mpi/progress-check.c)
target_link_libraries(progress-check-${fl} PRIVATE PkgConfig::${flavor} ${CMAKE_DL_LIBS})
set(in_time ${CMAKE_CURRENT_SOURCE_DIR}/mpi/in-time.sh)
set(pcheck $<TARGET_FILE:progress-check-${fl}>)
foreach(n 2 8)
  foreach(case recv isend colls nb rma-alloc rma-create)
    add_test(NAME mpi.${fl}-${n}-progress-${case}
             COMMAND env ${pre} ${in_time} 120 ${launch} ${n} ${pcheck} ${case} --limit 90 --expect-osmp)
  endforeach()
endforeach()
# Which progress source each rank uses, and the thread levels: under MPI_THREAD_FUNNELED the main thread calls
# the library's progress, under MPI_THREAD_MULTIPLE the waiting thread.
if(flavor STREQUAL "OMPI")
  set(source "progress in Open MPI's progress \\(a callback, opal_progress_register\\).*a wait inside OSMP calls opal_progress")
else()
  set(source "progress in OSMP's progress thread .*a wait inside OSMP calls (PMPI_Iprobe on MPI_COMM_WORLD|MPIX_Stream_progress)")
endif()
add_test(NAME mpi.${fl}-2-progress-verbose
         COMMAND env ${pre} OSMP_VERBOSE=1 ${in_time} 120 --expect "rank 0: nonblocking collectives ${source}"
                 --expect "rank 1: nonblocking collectives ${source}" ${launch} 2 ${pcheck} recv --limit 90 --expect-osmp)
foreach(level funneled multiple)
  add_test(NAME mpi.${fl}-2-progress-colls-${level}
           COMMAND env ${pre} ${in_time} 120 ${launch} 2 ${pcheck} colls --thread ${level} --limit 90 --expect-osmp)
endforeach()
# Issue 45's program, 4 MiB messages: at 18 ranks with the allgather forced to ring and direct and with the
# table's choice (gather_bcast, a composition, on more than 16 ranks), at 32 with the table's choice, at 2 with
# gather_bcast forced; and at 18 with a started persistent allgather. Under MPICH 4.0.2 a rank's part advances
# while it is blocked in MPI_Send only through OSMP's progress thread; before every algorithm had a resumable form,
# a test ran gather_bcast's blocking form and waited for the senders. (32 ranks with each algorithm forced: by
# hand, `ctest -R progress` after changing the list; CI time.)
foreach(run 18:ring 18:direct 18:auto 32:auto 2:gather_bcast)
  string(REPLACE ":" ";" run ${run})
  list(GET run 0 n)
  list(GET run 1 alg)
  set(name mpi.${fl}-${n}-progress-iallgather-${alg})
  add_test(NAME ${name}
           COMMAND env ${pre} OSMP_ALLGATHER_ALG=${alg} ${in_time} 280 ${launch} ${n} ${pcheck} iallgather
                   --bytes 4194304 --limit 240 --expect-osmp)
  if(NOT n EQUAL 2)
    set_tests_properties(${name} PROPERTIES RUN_SERIAL ON)
  endif()
endforeach()
add_test(NAME mpi.${fl}-18-progress-pallgather-ring
         COMMAND env ${pre} OSMP_ALLGATHER_ALG=ring ${in_time} 280 ${launch} 18 ${pcheck} pallgather --bytes 4194304
                 --limit 240 --expect-osmp)
set_tests_properties(mpi.${fl}-18-progress-pallgather-ring PROPERTIES RUN_SERIAL ON)
# The others blocked in a wait on their own MPI_Isend, and in a barrier on another communicator (18 ranks, ring).
foreach(case iallgather-wait iallgather-coll)
  add_test(NAME mpi.${fl}-18-progress-${case}-ring
           COMMAND env ${pre} OSMP_ALLGATHER_ALG=ring ${in_time} 280 ${launch} 18 ${pcheck} ${case} --bytes 4194304
                   --limit 240 --expect-osmp)
  set_tests_properties(mpi.${fl}-18-progress-${case}-ring PROPERTIES RUN_SERIAL ON)
endforeach()
