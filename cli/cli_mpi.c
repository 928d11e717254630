/* The gfi program's MPI layer (see cli_mpi.h). */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include "cli_mpi.h"
#ifdef GFI_HAVE_MPI
#include <limits.h>
#include <mpi.h>
#endif

static int g_on = 0, g_rank = 0, g_size = 1;

int cli_mpi_built(void) {
#ifdef GFI_HAVE_MPI
  return 1;
#else
  return 0;
#endif
}
int cli_mpi_on(void) { return g_on; }
int cli_mpi_rank(void) { return g_rank; }
int cli_mpi_size(void) { return g_size; }

double cli_mpi_time(void) {
#ifdef GFI_HAVE_MPI
  if (g_on) return MPI_Wtime();
#endif
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#ifdef GFI_HAVE_MPI
/* Started by a launcher: Open MPI's mpirun, PMIx (srun --mpi=pmix, mpirun),
 * PMI-1/2 (srun --mpi=pmi2, MPICH's hydra); GFI_MPI=1 forces it. */
static int launched(void) {
  static const char *vars[] = {"OMPI_COMM_WORLD_SIZE", "PMIX_RANK", "PMI_RANK", "PMI_SIZE", NULL};
  const char *f = getenv("GFI_MPI");
  if (f && *f) return atoi(f) != 0;
  for (int i = 0; vars[i]; i++)
    if (getenv(vars[i])) return 1;
  return 0;
}

void cli_mpi_start(int *argc, char ***argv) {
  if (!launched()) return;
  int provided;
  /* only the main thread calls MPI (the sweep's rank 0 computes on a second thread) */
  if (MPI_Init_thread(argc, argv, MPI_THREAD_FUNNELED, &provided) != MPI_SUCCESS) {
    fprintf(stderr, "gfi: MPI_Init failed\n");
    exit(1);
  }
  g_on = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &g_rank);
  MPI_Comm_size(MPI_COMM_WORLD, &g_size);
  /* errors come back as codes, so a rank can report and stop the others */
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
}

void cli_mpi_end(void) {
  if (g_on) MPI_Finalize();
  g_on = 0;
}

void cli_mpi_exit(int code, int collective) {
  fflush(stdout);
  fflush(stderr);
  if (g_on) {
    if (collective || g_size == 1) MPI_Finalize();
    else MPI_Abort(MPI_COMM_WORLD, code);
  }
  exit(code);
}

void cli_mpi_fail(int code, const char *msg) {
  if (g_on && g_size > 1 && g_rank != 0) {
    /* rank 0 may be failing the same way (the same arguments, the same
     * file): give it a moment to say so once and stop the job; a failure of
     * this rank alone is then said here and stops every rank */
    fflush(stdout);
    for (int i = 0; i < 40; i++) {
      struct timespec ts = {0, 50000000};
      nanosleep(&ts, NULL);
    }
  }
  fputs(msg, stderr);
  cli_mpi_exit(code, 0);
}

/* Messages longer than INT_MAX bytes go in pieces. */
#define PIECE ((size_t)1 << 30)

int cli_mpi_send(int to, int tag, const void *buf, size_t bytes) {
  const char *p = buf;
  do {
    size_t n = bytes < PIECE ? bytes : PIECE;
    int st = MPI_Send(p, (int)n, MPI_BYTE, to, tag, MPI_COMM_WORLD);
    if (st) return st;
    p += n;
    bytes -= n;
  } while (bytes);
  return 0;
}

int cli_mpi_recv(int from, int tag, void *buf, size_t bytes) {
  char *p = buf;
  do {
    size_t n = bytes < PIECE ? bytes : PIECE;
    int st = MPI_Recv(p, (int)n, MPI_BYTE, from, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (st) return st;
    p += n;
    bytes -= n;
  } while (bytes);
  return 0;
}

int cli_mpi_try_recv(int tag, void *buf, size_t bytes, int *from) {
  int flag = 0;
  MPI_Status s;
  if (MPI_Iprobe(MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &flag, &s) != MPI_SUCCESS || !flag) return 0;
  *from = s.MPI_SOURCE;
  return cli_mpi_recv(s.MPI_SOURCE, tag, buf, bytes) == 0;
}

int cli_mpi_bcast(void *buf, size_t bytes, int root) {
  char *p = buf;
  do {
    size_t n = bytes < PIECE ? bytes : PIECE;
    int st = MPI_Bcast(p, (int)n, MPI_BYTE, root, MPI_COMM_WORLD);
    if (st) return st;
    p += n;
    bytes -= n;
  } while (bytes);
  return 0;
}

int cli_mpi_minmax(double *lo, double *hi, size_t n) {
  if (n > INT_MAX) return MPI_ERR_COUNT;
  int st = MPI_Allreduce(MPI_IN_PLACE, lo, (int)n, MPI_DOUBLE, MPI_MIN, MPI_COMM_WORLD);
  return st ? st : MPI_Allreduce(MPI_IN_PLACE, hi, (int)n, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
}

int cli_mpi_max_int(int *v) { return MPI_Allreduce(MPI_IN_PLACE, v, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD); }

int cli_mpi_sum_size(size_t *v, size_t n) {
  unsigned long long t[64];
  if (n > 64) return MPI_ERR_COUNT;
  for (size_t i = 0; i < n; i++) t[i] = v[i];
  int st = MPI_Allreduce(MPI_IN_PLACE, t, (int)n, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
  for (size_t i = 0; i < n; i++) v[i] = (size_t)t[i];
  return st;
}

int cli_mpi_barrier(void) { return MPI_Barrier(MPI_COMM_WORLD); }

#else /* no MPI: one process; the communication calls are never reached */

void cli_mpi_start(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
}
void cli_mpi_end(void) {}
void cli_mpi_exit(int code, int collective) {
  (void)collective;
  exit(code);
}
void cli_mpi_fail(int code, const char *msg) {
  fputs(msg, stderr);
  exit(code);
}
int cli_mpi_send(int to, int tag, const void *buf, size_t bytes) {
  (void)to, (void)tag, (void)buf, (void)bytes;
  return 1;
}
int cli_mpi_recv(int from, int tag, void *buf, size_t bytes) {
  (void)from, (void)tag, (void)buf, (void)bytes;
  return 1;
}
int cli_mpi_try_recv(int tag, void *buf, size_t bytes, int *from) {
  (void)tag, (void)buf, (void)bytes, (void)from;
  return 0;
}
int cli_mpi_bcast(void *buf, size_t bytes, int root) {
  (void)buf, (void)bytes, (void)root;
  return 0;
}
int cli_mpi_minmax(double *lo, double *hi, size_t n) {
  (void)lo, (void)hi, (void)n;
  return 0;
}
int cli_mpi_max_int(int *v) {
  (void)v;
  return 0;
}
int cli_mpi_sum_size(size_t *v, size_t n) {
  (void)v, (void)n;
  return 0;
}
int cli_mpi_barrier(void) { return 0; }
#endif
