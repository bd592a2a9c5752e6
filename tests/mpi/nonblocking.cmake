# Nonblocking collectives under libosmp_mpi: included once per MPI flavor from tests/CMakeLists.txt
# (variables there: flavor, fl, launch, pre).
