/*
  upload_bench.cu - how fast can a CSR that PETSc holds in ordinary (pageable) host memory reach the GPU?
  Each way is timed on the same buffer (default 322 MB: the CSR of the 27-point
  100^3 matrix), median of 3, host wall clock around the whole operation (what a user waits for):

    pageable         one cudaMemcpy
    pageable xK      K host threads, each a cudaMemcpyAsync of its part on its own stream
    register         cudaHostRegister, then a copy, then cudaHostUnregister (each timed)
    register xK      the registration in K threads (disjoint page-aligned parts)
    staged xK        K threads copy parts into a pinned pool (double buffers of 8 MB each) and queue the
                     copies to the GPU from there
    zero-copy        a kernel reading registered host memory directly (no device copy of the source)
    pageable access  (only where the device reports pageableMemoryAccess) a kernel reading malloc'd memory

  Usage: upload_bench [MB]
*/
#include <cuda_runtime.h>
#include <sched.h>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <unistd.h>
#include <vector>

#define CK(x) \
  do { \
    cudaError_t e_ = (x); \
    if (e_ != cudaSuccess) { \
      fprintf(stderr, "%s:%d %s: %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1); \
    } \
  } while (0)

static double now_ms() { return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now().time_since_epoch()).count(); }

__global__ void read_host(const double *__restrict__ src, double *__restrict__ dst, size_t n)
{
  for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) dst[i] = src[i];
}

static double median3(std::vector<double> v)
{
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

int main(int argc, char **argv)
{
  const size_t MB = argc > 1 ? (size_t)atol(argv[1]) : 322, bytes = MB << 20, n = bytes / 8;
  const size_t page = (size_t)sysconf(_SC_PAGESIZE);
  cpu_set_t    cs;
  sched_getaffinity(0, sizeof(cs), &cs);
  int dev = 0, pma = 0, sms = 0;
  CK(cudaGetDevice(&dev));
  CK(cudaDeviceGetAttribute(&pma, cudaDevAttrPageableMemoryAccess, dev));
  CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
  cudaDeviceProp prop;
  CK(cudaGetDeviceProperties(&prop, dev));
  printf("device %s, %zu MB, cores in affinity %d, pageableMemoryAccess %d\n", prop.name, MB, CPU_COUNT(&cs), pma);

  double *h = (double *)malloc(bytes), *d = NULL;
  for (size_t i = 0; i < n; i++) h[i] = (double)i;
  CK(cudaMalloc(&d, bytes));
  CK(cudaMemset(d, 0, bytes));
  CK(cudaDeviceSynchronize());
  std::vector<double> t;
  printf("| way | ms | GB/s |\n|---|---|---|\n");
  auto row = [&](const char *name, double ms) { printf("| %s | %.2f | %.1f |\n", name, ms, bytes / ms / 1e6); fflush(stdout); };

  t.clear();
  for (int r = 0; r < 3; r++) {
    double t0 = now_ms();
    CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    t.push_back(now_ms() - t0);
  }
  row("pageable cudaMemcpy", median3(t));

  for (int K : {2, 4, 8, 16}) {
    std::vector<cudaStream_t> st(K);
    for (auto &s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    t.clear();
    for (int r = 0; r < 3; r++) {
      double                   t0 = now_ms();
      std::vector<std::thread> th;
      for (int k = 0; k < K; k++)
        th.emplace_back([&, k] {
          size_t a = bytes / K * k, b = k == K - 1 ? bytes : bytes / K * (k + 1);
          CK(cudaMemcpyAsync((char *)d + a, (char *)h + a, b - a, cudaMemcpyHostToDevice, st[k]));
          CK(cudaStreamSynchronize(st[k]));
        });
      for (auto &x : th) x.join();
      t.push_back(now_ms() - t0);
    }
    char name[64];
    snprintf(name, sizeof(name), "pageable x%d threads", K);
    row(name, median3(t));
    for (auto &s : st) CK(cudaStreamDestroy(s));
  }

  {
    std::vector<double> tr, tc, tu;
    for (int r = 0; r < 3; r++) {
      double t0 = now_ms();
      CK(cudaHostRegister(h, bytes, cudaHostRegisterDefault));
      double t1 = now_ms();
      CK(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
      double t2 = now_ms();
      CK(cudaHostUnregister(h));
      double t3 = now_ms();
      tr.push_back(t1 - t0);
      tc.push_back(t2 - t1);
      tu.push_back(t3 - t2);
    }
    row("cudaHostRegister", median3(tr));
    row("copy from registered", median3(tc));
    row("cudaHostUnregister", median3(tu));
  }

  for (int K : {4, 8}) {
    std::vector<double> tr, tu;
    for (int r = 0; r < 3; r++) {
      /* page-aligned parts: registrations must not share a page */
      char  *base = (char *)(((size_t)h + page - 1) / page * page);
      size_t len  = (bytes - (base - (char *)h)) / page * page;
      auto   part = [&](int k, size_t *off, size_t *l) {
        size_t per = len / K / page * page;
        *off       = per * k;
        *l         = k == K - 1 ? len - *off : per;
      };
      double                   t0 = now_ms();
      std::vector<std::thread> th;
      for (int k = 0; k < K; k++)
        th.emplace_back([&, k] {
          size_t off, l;
          part(k, &off, &l);
          CK(cudaHostRegister(base + off, l, cudaHostRegisterDefault));
        });
      for (auto &x : th) x.join();
      double t1 = now_ms();
      th.clear();
      for (int k = 0; k < K; k++)
        th.emplace_back([&, k] {
          size_t off, l;
          part(k, &off, &l);
          CK(cudaHostUnregister(base + off));
        });
      for (auto &x : th) x.join();
      tr.push_back(t1 - t0);
      tu.push_back(now_ms() - t1);
    }
    char name[64];
    snprintf(name, sizeof(name), "cudaHostRegister x%d threads", K);
    row(name, median3(tr));
    snprintf(name, sizeof(name), "cudaHostUnregister x%d threads", K);
    row(name, median3(tu));
  }

  {
    const size_t        chunk = 8u << 20;
    std::vector<double> ta;
    for (int K : {1, 2, 4, 8}) {
      double                    t0 = now_ms();
      std::vector<char *>       buf(2 * K);
      std::vector<cudaStream_t> st(K);
      std::vector<cudaEvent_t>  ev(2 * K);
      for (auto &b : buf) CK(cudaMallocHost(&b, chunk));
      for (auto &s : st) CK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
      for (auto &e : ev) CK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
      double talloc = now_ms() - t0;
      t.clear();
      for (int r = 0; r < 3; r++) {
        double                   t1 = now_ms();
        std::vector<std::thread> th;
        for (int k = 0; k < K; k++)
          th.emplace_back([&, k] {
            size_t a = bytes / K * k, b = k == K - 1 ? bytes : bytes / K * (k + 1);
            int    q = 0;
            for (size_t o = a; o < b; o += chunk, q ^= 1) {
              size_t l = std::min(chunk, b - o);
              CK(cudaEventSynchronize(ev[2 * k + q]));
              memcpy(buf[2 * k + q], (char *)h + o, l);
              CK(cudaMemcpyAsync((char *)d + o, buf[2 * k + q], l, cudaMemcpyHostToDevice, st[k]));
              CK(cudaEventRecord(ev[2 * k + q], st[k]));
            }
            CK(cudaStreamSynchronize(st[k]));
          });
        for (auto &x : th) x.join();
        t.push_back(now_ms() - t1);
      }
      char name[80];
      snprintf(name, sizeof(name), "staged x%d threads (pool alloc %.1f ms)", K, talloc);
      row(name, median3(t));
      for (auto &b : buf) CK(cudaFreeHost(b));
      for (auto &s : st) CK(cudaStreamDestroy(s));
      for (auto &e : ev) CK(cudaEventDestroy(e));
    }
  }

  {
    CK(cudaHostRegister(h, bytes, cudaHostRegisterMapped));
    double *hd = NULL;
    CK(cudaHostGetDevicePointer(&hd, h, 0));
    t.clear();
    for (int r = 0; r < 3; r++) {
      double t0 = now_ms();
      read_host<<<sms * 8, 512>>>(hd, d, n);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      t.push_back(now_ms() - t0);
    }
    row("zero-copy kernel (registered)", median3(t));
    CK(cudaHostUnregister(h));
  }
  if (pma) {
    t.clear();
    for (int r = 0; r < 3; r++) {
      double t0 = now_ms();
      read_host<<<sms * 8, 512>>>(h, d, n);
      CK(cudaGetLastError());
      CK(cudaDeviceSynchronize());
      t.push_back(now_ms() - t0);
    }
    row("kernel reading pageable memory (HMM)", median3(t));
  }
  /* check the last copy */
  std::vector<double> back(1024);
  CK(cudaMemcpy(back.data(), d + n - 1024, 1024 * 8, cudaMemcpyDeviceToHost));
  for (int i = 0; i < 1024; i++)
    if (back[i] != (double)(n - 1024 + i)) {
      printf("WRONG at %d\n", i);
      return 1;
    }
  printf("checked\n");
  free(h);
  CK(cudaFree(d));
  return 0;
}
