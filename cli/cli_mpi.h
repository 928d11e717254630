/* The gfi program's MPI layer: the only file that calls MPI (cli_mpi.c,
 * compiled against MPI when meson finds it; without MPI every function
 * reports one process of rank 0 and the communication calls are never
 * reached). The library knows nothing of MPI: commands split their work over
 * ranks through the hooks the library offers (estimators/mise_fast.h) and
 * through these wrappers.
 *
 * MPI is initialised only when the program was started by an MPI launcher
 * (mpirun, mpiexec, srun with PMI or PMIx): a plain `gfi ...` never touches
 * MPI. Under MPI, every rank runs the same command with the same arguments;
 * commands that know how to split their work (sweep, mise --mc, density
 * --data FILE) do so, every other command runs on rank 0 alone. */
#ifndef GFI_CLI_MPI_H
#define GFI_CLI_MPI_H

#include <stddef.h>
#include <stdint.h>

/* Start MPI when launched under it (from main, before anything else). */
void cli_mpi_start(int *argc, char ***argv);
/* Under MPI with several ranks: every rank must have been started with the
 * same arguments (all but the program's path, --threads and --progress):
 * an MPMD launch 'mpirun -np 1 gfi A : -np 1 gfi B' with different options
 * would mix rows of two jobs. Compared at start (rank 0's arguments are
 * broadcast); on a difference rank 0 names the first rank and argument that
 * differ and every rank exits with status 2. */
void cli_mpi_agree(int argc, char **argv);
/* MPI_Finalize when MPI was started (main's normal return). */
void cli_mpi_end(void);
/* 1 when gfi was built with MPI. */
int cli_mpi_built(void);
/* 1 when running under an MPI launcher (even with one rank). */
int cli_mpi_on(void);
/* This process's rank and the number of ranks (0 and 1 without MPI). */
int cli_mpi_rank(void);
int cli_mpi_size(void);
/* Leave the program with `code`. collective = 1: every rank leaves the same
 * way at the same point (a usage error found while parsing the same
 * arguments): MPI is finalised and the ranks exit. collective = 0: this rank
 * alone failed: it exits without MPI_Finalize, and the launcher stops the others. Without MPI: exit(code). */
_Noreturn void cli_mpi_exit(int code, int collective);
/* A failure of this rank (msg: the whole message, newline included). Under
 * MPI the message reaches rank 0, which prints it once (its own failure, or
 * the first another rank reports) and stops every rank, each leaving through
 * MPI_Finalize with `code` (cli_mpi.c describes the protocol); never a silent
 * exit that leaves rank 0 waiting for this rank. Without MPI: msg to stderr
 * and exit(code). */
_Noreturn void cli_mpi_fail(int code, const char *msg);
/* Whether the running command splits its work over the ranks (1, the
 * default) or runs on rank 0 alone while the others wait in MPI_Finalize. */
void cli_mpi_set_split(int split);
/* Seconds of wall time (MPI_Wtime, or a monotonic clock without MPI). */
double cli_mpi_time(void);

/* Point-to-point and collectives on MPI_COMM_WORLD; return 0 or an MPI
 * error code. Tags separate the protocols of one command. */
int cli_mpi_send(int to, int tag, const void *buf, size_t bytes);
int cli_mpi_recv(int from, int tag, void *buf, size_t bytes);
/* Receive from any rank with `tag` if a message is waiting: 1 and *from set,
 * 0 when none is waiting (never blocks). */
int cli_mpi_try_recv(int tag, void *buf, size_t bytes, int *from);
int cli_mpi_bcast(void *buf, size_t bytes, int root);
/* In place over all ranks: lo[i] = min, hi[i] = max (n values each). */
int cli_mpi_minmax(double *lo, double *hi, size_t n);
/* In place: v = max over all ranks; and the sum of n <= 64 size_t values. */
int cli_mpi_max_int(int *v);
int cli_mpi_sum_size(size_t *v, size_t n);
int cli_mpi_barrier(void);

#endif
