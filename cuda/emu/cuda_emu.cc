/* The CPU emulator of the CUDA execution model (see cuda_emu.h). */
#include "cuda_emu.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include <map>
#include <mutex>
#include <vector>

namespace gfi_emu {

uint3 thread_idx, block_idx;
dim3 block_dim, grid_dim;

namespace {

const size_t SMEM_DEFAULT = 48 * 1024;   /* without cudaFuncSetAttribute */
const size_t SMEM_OPTIN = 227 * 1024;    /* Hopper's opt-in maximum per block */
const size_t STACK = 256 * 1024;         /* per emulated thread */

enum state { RUNNABLE, WAIT_BLOCK, WAIT_WARP, DONE };

/* Context switches: a few instructions on x86-64 (callee-saved registers and
 * the stack pointer; kernels never change the SSE or x87 control words, so
 * those are not switched: ldmxcsr and fldcw would double the cost of a warp
 * shuffle); ucontext elsewhere, which costs a system call per switch. */
#if defined(__x86_64__)
struct ctx_t {
  void *sp;
};
extern "C" void gfi_emu_switch(void **save, void *to);
__asm__(".text\n"
        ".globl gfi_emu_switch\n"
        ".type gfi_emu_switch,@function\n"
        "gfi_emu_switch:\n"
        "  pushq %rbp\n  pushq %rbx\n  pushq %r12\n  pushq %r13\n  pushq %r14\n  pushq %r15\n"
        "  movq %rsp, (%rdi)\n"
        "  movq %rsi, %rsp\n"
        "  popq %r15\n  popq %r14\n  popq %r13\n  popq %r12\n  popq %rbx\n  popq %rbp\n"
        "  ret\n"
        ".size gfi_emu_switch, .-gfi_emu_switch\n");
static inline void ctx_swap(ctx_t *from, ctx_t *to) { gfi_emu_switch(&from->sp, to->sp); }
static void ctx_make(ctx_t *c, void *stack, size_t size, void (*entry)()) {
  uintptr_t top = ((uintptr_t)stack + size) & ~(uintptr_t)15;
  uint64_t *p = (uint64_t *)top;
  *--p = 0;                 /* entry's return address: never used */
  *--p = (uint64_t)entry;   /* popped by ret */
  for (int r = 0; r < 6; r++) *--p = 0;
  c->sp = p;
}
#else
struct ctx_t {
  ucontext_t uc;
};
static inline void ctx_swap(ctx_t *from, ctx_t *to) { swapcontext(&from->uc, &to->uc); }
static void ctx_make(ctx_t *c, void *stack, size_t size, void (*entry)()) {
  getcontext(&c->uc);
  c->uc.uc_stack.ss_sp = stack;
  c->uc.uc_stack.ss_size = size;
  c->uc.uc_link = nullptr;
  makecontext(&c->uc, entry, 0);
}
#endif

struct fiber {
  ctx_t ctx;
  void *stack;
  uint3 tid;
  int lin, warp, lane;
  unsigned xcount; /* this thread's full-warp exchanges so far */
  state st;
};

struct warp_state {
  unsigned waiting;  /* lanes at a warp barrier */
  unsigned want[32]; /* the mask each of them named */
  unsigned done;    /* exited lanes, and lanes past the block's end */
  uint64_t buf[3][32]; /* full-warp exchanges alternate 0, 1; others use 2 */
};

std::recursive_mutex big; /* one launch or runtime call at a time */
std::map<uintptr_t, size_t> allocs;
size_t live_bytes = 0, faults = 0;
std::map<const void *, int> max_smem;
cudaError_t last_error = cudaSuccess;
int current_device = 0;

/* launch state */
std::vector<fiber> fibers;
std::vector<warp_state> warps;
fiber *cur = nullptr;
ctx_t sched;
int live = 0, arrived = 0;
bool failed = false;
void (*g_body)(void *) = nullptr;
void *g_ctx = nullptr;
unsigned char *smem_buf = nullptr;
size_t smem_cap = 0;
unsigned long launches = 0;
/* GFI_CUDA_EMU_ORDER: alternate (default), forward or reverse thread order */
int order_mode = [] {
  const char *e = getenv("GFI_CUDA_EMU_ORDER");
  if (!e) return 0;
  if (!strcmp(e, "forward")) return 1;
  if (!strcmp(e, "reverse")) return 2;
  return 0;
}();

const char *owner = nullptr; /* the kernel running, for messages */

int nthreads = 0, cur_k = 0; /* threads of the block, cur's place in the sweep */
bool reverse_order = false;

fiber &at_sweep(int k) { return fibers[reverse_order ? nthreads - 1 - k : k]; }

/* Hand over to the next runnable thread of this sweep, straight from fiber to
 * fiber; back to the scheduler at the end of the sweep. */
void yield_to_scheduler() {
  fiber *me = cur;
  for (int k = cur_k + 1; k < nthreads; k++) {
    fiber &f = at_sweep(k);
    if (f.st != RUNNABLE) continue;
    cur = &f;
    cur_k = k;
    thread_idx = f.tid;
    ctx_swap(&me->ctx, &f.ctx);
    return;
  }
  ctx_swap(&me->ctx, &sched);
}

void release_block() {
  for (fiber &f : fibers)
    if (f.st == WAIT_BLOCK) f.st = RUNNABLE;
  arrived = 0;
}

void fiber_main() {
  g_body(g_ctx);
  fiber *f = cur;
  f->st = DONE;
  live--;
  warp_state &w = warps[f->warp];
  w.done |= 1u << f->lane;
  for (int b = 0; b < 32; b++)
    if ((w.waiting >> b) & 1u && (w.want[b] >> f->lane) & 1u) {
      fault("thread (%u,%u,%u) of block (%u,%u,%u) exited while lane %d of its warp waits for it "
            "at a warp barrier (mask 0x%08x)", f->tid.x, f->tid.y, f->tid.z, block_idx.x,
            block_idx.y, block_idx.z, b, w.want[b]);
      break;
    }
  /* exited threads no longer count at __syncthreads (as on Volta and later) */
  if (arrived > 0 && arrived == live) release_block();
  yield_to_scheduler();
  abort(); /* never resumed */
}

/* Outside run(): getcontext returns twice in principle, and run's locals must
 * not live across it. */
__attribute__((noinline)) void init_fiber(fiber &f, int i, dim3 b) {
  ctx_make(&f.ctx, f.stack, STACK, fiber_main);
  f.lin = i;
  f.tid = uint3{(unsigned)(i % b.x), (unsigned)(i / b.x % b.y), (unsigned)(i / (b.x * b.y))};
  f.warp = i / 32;
  f.lane = i % 32;
  f.xcount = 0;
  f.st = RUNNABLE;
}

void ensure_fibers(int n) {
  while ((int)fibers.size() < n) {
    fiber f;
    memset(&f, 0, sizeof f);
    long page = sysconf(_SC_PAGESIZE);
    void *s = mmap(nullptr, STACK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (s == MAP_FAILED) {
      fprintf(stderr, "gfi CUDA emulator: cannot map a thread stack: %s\n", strerror(errno));
      abort();
    }
    mprotect(s, (size_t)page, PROT_NONE); /* guard: an overflow faults */
    f.stack = s;
    fibers.push_back(f);
  }
}

bool in_device(const void *p, size_t n, size_t *room) {
  uintptr_t a = (uintptr_t)p;
  auto it = allocs.upper_bound(a);
  if (it == allocs.begin()) return false;
  --it;
  if (a < it->first || a > it->first + it->second) return false;
  if (a == it->first + it->second && it->second != 0 && n != 0) return false;
  if (room) *room = it->first + it->second - a;
  return n <= it->first + it->second - a;
}

cudaError_t ret(cudaError_t e) {
  if (e != cudaSuccess) last_error = e;
  return e;
}

} /* namespace */

void fault(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fprintf(stderr, "gfi CUDA emulator: fault in %s: ", owner ? owner : "the runtime");
  vfprintf(stderr, fmt, ap);
  fputc('\n', stderr);
  va_end(ap);
  faults++;
  failed = true;
  if (cur) ctx_swap(&cur->ctx, &sched); /* the faulting thread is never resumed */
}

void set_last_error(cudaError_t e) { last_error = e; }

void set_max_dyn_smem(const void *fn, int bytes) {
  std::lock_guard<std::recursive_mutex> g(big);
  max_smem[fn] = bytes;
}

int check_pointer(const void *p, int arg, const char *kernel) {
  if (!p) return 1;
  std::lock_guard<std::recursive_mutex> g(big);
  if (in_device(p, 0, nullptr)) return 1;
  owner = kernel;
  fault("argument %d is a host pointer (%p): the kernel would read or write host memory", arg, p);
  owner = nullptr;
  return 0;
}

int lane_id() { return cur ? cur->lane : 0; }

unsigned char *dyn_shared() { return smem_buf; }

void syncthreads() {
  if (!cur || failed) return;
  arrived++;
  cur->st = WAIT_BLOCK;
  if (arrived == live) {
    release_block();
    return;
  }
  yield_to_scheduler();
}

void syncwarp(unsigned mask) {
  if (!cur || failed) return;
  fiber *f = cur;
  warp_state &w = warps[f->warp];
  unsigned me = 1u << f->lane;
  if (!(mask & me)) {
    fault("thread %d calls a warp operation with mask 0x%08x that leaves its own lane %d out",
          f->lin, mask, f->lane);
    return;
  }
  if (mask & w.done) {
    fault("warp %d: a warp operation with mask 0x%08x names exited or absent lanes 0x%08x",
          f->warp, mask, mask & w.done);
    return;
  }
  /* released when every lane of the mask waits with the same mask; lanes
   * that wait with other masks can only deadlock, which the scheduler reports */
  w.waiting |= me;
  w.want[f->lane] = mask;
  bool all = (w.waiting & mask) == mask;
  for (int b = 0; all && b < 32; b++)
    if ((mask >> b) & 1u && w.want[b] != mask) all = false;
  if (all) {
    for (int b = 0; b < 32; b++)
      if ((mask >> b) & 1u) {
        fiber &o = fibers[(size_t)f->warp * 32 + b];
        if (o.st == WAIT_WARP) o.st = RUNNABLE;
      }
    w.waiting &= ~mask;
    return;
  }
  f->st = WAIT_WARP;
  yield_to_scheduler();
}

/* A full-warp exchange costs one warp barrier: successive ones alternate
 * between two buffers, and a lane writing a buffer again has passed the
 * barrier of the exchange in between, which every lane reached after reading
 * it. An exchange over part of the warp uses a third buffer between two
 * barriers (disjoint masks touch disjoint slots). */
uint64_t exchange(unsigned mask, uint64_t v, int src) {
  if (!cur) return v;
  fiber *f = cur;
  warp_state &w = warps[f->warp];
  const bool full = mask == 0xffffffffu;
  unsigned p = full ? (f->xcount & 1u) : 2u;
  if (full) f->xcount++;
  w.buf[p][f->lane] = v;
  syncwarp(mask);
  if (failed) return v;
  if (src < 0 || src > 31 || !((mask >> src) & 1u)) {
    fault("warp %d lane %d reads lane %d, outside the mask 0x%08x", f->warp, f->lane, src, mask);
    return v;
  }
  uint64_t r = w.buf[p][src];
  if (!full) syncwarp(mask); /* nobody rewrites slot 2 before everyone has read it */
  return r;
}

void run(const launch_cfg &c, void (*body)(void *), void *ctx) {
  std::lock_guard<std::recursive_mutex> g(big);
  owner = c.name;
  unsigned long long nt = (unsigned long long)c.block.x * c.block.y * c.block.z;
  if (nt == 0 || nt > 1024 || c.block.z > 64 || c.grid.x == 0 || c.grid.y == 0 || c.grid.z == 0 ||
      c.grid.y > 65535 || c.grid.z > 65535 || c.grid.x > 2147483647u) {
    fprintf(stderr, "gfi CUDA emulator: %s: launch shape grid (%u,%u,%u) block (%u,%u,%u) refused\n",
            c.name, c.grid.x, c.grid.y, c.grid.z, c.block.x, c.block.y, c.block.z);
    last_error = cudaErrorInvalidConfiguration;
    owner = nullptr;
    return;
  }
  size_t lim = SMEM_DEFAULT;
  auto ms = max_smem.find(c.fn);
  if (ms != max_smem.end()) lim = (size_t)ms->second;
  if (lim > SMEM_OPTIN) lim = SMEM_OPTIN;
  if (c.smem > lim) {
    fault("%zu bytes of dynamic shared memory asked for, %zu allowed (cudaFuncSetAttribute "
          "raises the limit to %zu)", c.smem, lim, SMEM_OPTIN);
    failed = false;
    last_error = cudaErrorInvalidValue;
    owner = nullptr;
    return;
  }
  /* exactly the bytes asked for, fresh each launch: under AddressSanitizer an
   * access past the end of shared memory is caught too */
  free(smem_buf);
  smem_buf = nullptr;
  smem_cap = 0;
  if (c.smem) {
    smem_buf = (unsigned char *)malloc(c.smem); /* 16-byte aligned, as __align__(16) asks */
    if (!smem_buf) {
      last_error = cudaErrorMemoryAllocation;
      owner = nullptr;
      return;
    }
    smem_cap = c.smem;
  }
  int n = (int)nt;
  ensure_fibers(n);
  int nw = (n + 31) / 32;
  warps.assign((size_t)nw, warp_state());
  block_dim = c.block;
  grid_dim = c.grid;
  g_body = body;
  g_ctx = ctx;
  failed = false;
  unsigned long blk = 0;
  for (unsigned bz = 0; bz < c.grid.z && !failed; bz++)
    for (unsigned by = 0; by < c.grid.y && !failed; by++)
      for (unsigned bx = 0; bx < c.grid.x && !failed; bx++, blk++) {
        block_idx = uint3{bx, by, bz};
        if (smem_buf) memset(smem_buf, 0xff, smem_cap);
        for (int w = 0; w < nw; w++) {
          warps[w] = warp_state();
          if (w == nw - 1 && n % 32) warps[w].done = ~0u << (n % 32);
        }
        for (int i = 0; i < n; i++) init_fiber(fibers[i], i, c.block);
        live = n;
        arrived = 0;
        reverse_order = order_mode == 0 ? ((blk + launches) & 1) != 0 : order_mode == 2;
        nthreads = n;
        while (live > 0 && !failed) {
          bool any = false;
          for (int k = 0; k < n; k++) {
            fiber &f = at_sweep(k);
            if (f.st != RUNNABLE) continue;
            any = true;
            cur = &f;
            cur_k = k;
            thread_idx = f.tid;
            ctx_swap(&sched, &f.ctx); /* runs the rest of the sweep */
            cur = nullptr;
            break;
          }
          if (!any && live > 0 && !failed) {
            int wb = 0, ww = 0;
            for (int i = 0; i < n; i++) {
              wb += fibers[i].st == WAIT_BLOCK;
              ww += fibers[i].st == WAIT_WARP;
            }
            fault("block (%u,%u,%u) deadlocks: %d threads wait at __syncthreads, %d at a warp "
                  "barrier (divergent barriers)", bx, by, bz, wb, ww);
          }
        }
        cur = nullptr;
      }
  launches++;
  if (failed) last_error = cudaErrorLaunchFailure;
  failed = false;
  owner = nullptr;
}

} /* namespace gfi_emu */

using namespace gfi_emu;

extern "C" {

cudaError_t cudaMalloc(void **p, size_t n) {
  std::lock_guard<std::recursive_mutex> g(big);
  if (!p) return ret(cudaErrorInvalidValue);
  *p = nullptr;
  if (n == 0) return cudaSuccess;
  void *m = malloc(n);
  if (!m) return ret(cudaErrorMemoryAllocation);
  memset(m, 0xff, n); /* NaN garbage: a read of what was never written shows */
  allocs[(uintptr_t)m] = n;
  live_bytes += n;
  *p = m;
  return cudaSuccess;
}

cudaError_t cudaFree(void *p) {
  std::lock_guard<std::recursive_mutex> g(big);
  if (!p) return cudaSuccess;
  auto it = allocs.find((uintptr_t)p);
  if (it == allocs.end()) {
    fault("cudaFree(%p): not the start of a device allocation", p);
    failed = false;
    return ret(cudaErrorInvalidDevicePointer);
  }
  live_bytes -= it->second;
  allocs.erase(it);
  free(p);
  return cudaSuccess;
}

static cudaError_t copy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
  std::lock_guard<std::recursive_mutex> g(big);
  if (n == 0) return cudaSuccess;
  if (!dst || !src) return ret(cudaErrorInvalidValue);
  size_t room = 0;
  bool dd = in_device(dst, 0, nullptr), sd = in_device(src, 0, nullptr);
  bool want_dd = kind == cudaMemcpyHostToDevice || kind == cudaMemcpyDeviceToDevice;
  bool want_sd = kind == cudaMemcpyDeviceToHost || kind == cudaMemcpyDeviceToDevice;
  if (kind == cudaMemcpyDefault) {
    want_dd = dd;
    want_sd = sd;
  } else if (kind < 0 || kind > cudaMemcpyDefault) {
    return ret(cudaErrorInvalidMemcpyDirection);
  }
  if (dd != want_dd || sd != want_sd) {
    fault("cudaMemcpy kind %d: destination is %s memory, source is %s memory", (int)kind,
          dd ? "device" : "host", sd ? "device" : "host");
    failed = false;
    return ret(cudaErrorInvalidValue);
  }
  if (dd && !in_device(dst, n, &room)) {
    fault("cudaMemcpy writes %zu bytes where the allocation has %zu left", n, room);
    failed = false;
    return ret(cudaErrorInvalidValue);
  }
  if (sd && !in_device(src, n, &room)) {
    fault("cudaMemcpy reads %zu bytes where the allocation has %zu left", n, room);
    failed = false;
    return ret(cudaErrorInvalidValue);
  }
  memmove(dst, src, n);
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind) {
  return copy(dst, src, n, kind);
}
cudaError_t cudaMemcpyAsync(void *dst, const void *src, size_t n, enum cudaMemcpyKind kind,
                            cudaStream_t) {
  return copy(dst, src, n, kind);
}

cudaError_t cudaMemset(void *p, int v, size_t n) {
  std::lock_guard<std::recursive_mutex> g(big);
  size_t room = 0;
  if (n == 0) return cudaSuccess;
  if (!in_device(p, n, &room)) {
    fault("cudaMemset of %zu bytes at %p: not inside one device allocation", n, p);
    failed = false;
    return ret(cudaErrorInvalidValue);
  }
  memset(p, v, n);
  return cudaSuccess;
}
cudaError_t cudaMemsetAsync(void *p, int v, size_t n, cudaStream_t) { return cudaMemset(p, v, n); }

struct gfi_emu_stream {
  int unused;
};
cudaError_t cudaStreamCreate(cudaStream_t *s) {
  if (!s) return ret(cudaErrorInvalidValue);
  *s = (cudaStream_t)calloc(1, sizeof(gfi_emu_stream));
  return *s ? cudaSuccess : ret(cudaErrorMemoryAllocation);
}
cudaError_t cudaStreamDestroy(cudaStream_t s) {
  free(s);
  return cudaSuccess;
}
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaDeviceSynchronize(void) { return cudaSuccess; }

cudaError_t cudaGetLastError(void) {
  std::lock_guard<std::recursive_mutex> g(big);
  cudaError_t e = last_error;
  last_error = cudaSuccess;
  return e;
}
cudaError_t cudaPeekAtLastError(void) { return last_error; }

const char *cudaGetErrorString(cudaError_t e) {
  switch (e) {
    case cudaSuccess: return "no error";
    case cudaErrorInvalidValue: return "invalid argument";
    case cudaErrorMemoryAllocation: return "out of memory";
    case cudaErrorInvalidConfiguration: return "invalid configuration argument";
    case cudaErrorInvalidDevicePointer: return "invalid device pointer";
    case cudaErrorInvalidMemcpyDirection: return "invalid copy direction for memcpy";
    case cudaErrorNoDevice: return "no CUDA-capable device is detected";
    case cudaErrorInvalidDevice: return "invalid device ordinal";
    case cudaErrorLaunchFailure: return "unspecified launch failure";
  }
  return "unknown error";
}

static int emu_devices(void) {
  const char *e = getenv("GFI_CUDA_EMU_DEVICES");
  return e && *e == '0' ? 0 : 1;
}

cudaError_t cudaGetDeviceCount(int *n) {
  if (!n) return ret(cudaErrorInvalidValue);
  *n = emu_devices();
  return *n ? cudaSuccess : ret(cudaErrorNoDevice);
}
cudaError_t cudaSetDevice(int d) {
  if (d < 0 || d >= emu_devices()) return ret(cudaErrorInvalidDevice);
  current_device = d;
  return cudaSuccess;
}
cudaError_t cudaGetDevice(int *d) {
  if (!d) return ret(cudaErrorInvalidValue);
  *d = current_device;
  return cudaSuccess;
}
cudaError_t cudaGetDeviceProperties(cudaDeviceProp *p, int d) {
  if (!p) return ret(cudaErrorInvalidValue);
  if (d < 0 || d >= emu_devices()) return ret(cudaErrorInvalidDevice);
  memset(p, 0, sizeof *p);
  snprintf(p->name, sizeof p->name, "gfi CUDA emulator (CPU, not a GPU)");
  p->totalGlobalMem = (size_t)1 << 34;
  p->sharedMemPerBlock = SMEM_DEFAULT;
  p->warpSize = 32;
  p->maxThreadsPerBlock = 1024;
  p->major = 9;
  p->minor = 0;
  p->multiProcessorCount = 1;
  return cudaSuccess;
}
cudaError_t cudaDeviceGetAttribute(int *v, enum cudaDeviceAttr a, int d) {
  if (!v) return ret(cudaErrorInvalidValue);
  if (d < 0 || d >= emu_devices()) return ret(cudaErrorInvalidDevice);
  *v = a == cudaDevAttrClockRate ? 0 : 0;
  return cudaSuccess;
}
cudaError_t cudaPointerGetAttributes(cudaPointerAttributes *a, const void *p) {
  std::lock_guard<std::recursive_mutex> g(big);
  if (!a) return ret(cudaErrorInvalidValue);
  memset(a, 0, sizeof *a);
  if (p && in_device(p, 0, nullptr)) {
    a->type = cudaMemoryTypeDevice;
    a->devicePointer = (void *)p;
  } else {
    a->type = cudaMemoryTypeUnregistered;
    a->hostPointer = (void *)p;
  }
  return cudaSuccess;
}

size_t gfi_cuda_emu_live_bytes(void) {
  std::lock_guard<std::recursive_mutex> g(big);
  return live_bytes;
}
size_t gfi_cuda_emu_faults(void) {
  std::lock_guard<std::recursive_mutex> g(big);
  return faults;
}

} /* extern "C" */
