#!/usr/bin/env bash
# Stands in for mpirun on PATH: appends its command line to the file named by
# TRA_TEST_MPIRUN_LOG (one line per job started), then runs the real mpirun
# (TRA_TEST_MPIRUN). Lets a test count the MPI jobs a command starts.
echo "mpirun $*" >> "$TRA_TEST_MPIRUN_LOG"
exec "$TRA_TEST_MPIRUN" "$@"
