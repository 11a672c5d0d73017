//===- CudaTest.cpp - The CUDA runtime against a fake driver --------------===//
//
// runtime/cuda on the fake driver and fake cuBLAS of this directory (host
// memory, kernels recorded, not run): initialization and its errors, the
// caching pool, copies (strided ones and tile fetches on the copy stream),
// pinned host memory,
// lazy module loading, launches and the errors that name kernels, and the
// row-major to column-major mapping of tra_cuda_gemm.
// Each suite runs in its own process with the environment CMakeLists.txt
// gives it (the runtime initializes once per process).
//
//===----------------------------------------------------------------------===//

#include "tra/Cuda/Cuda.h"
#include "tra/Cuda/ABI.h"
#include "tra/Cuda/Accelerator.h"

#include <gtest/gtest.h>

#include <dlfcn.h>

#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

using namespace tra;

namespace {
/// A function of the fake driver (or cuBLAS) library loaded by the runtime.
template <class F> F fake(const char *library, const char *name) {
  void *handle = dlopen(library, RTLD_NOW | RTLD_NOLOAD);
  if (!handle)
    return nullptr;
  return reinterpret_cast<F>(dlsym(handle, name));
}
template <class F> F driver(const char *name) {
  return fake<F>(TRA_FAKE_CUDA_DRIVER, name);
}

std::string takeError() {
  char message[512];
  if (!tra_cuda_take_error(message, sizeof(message)))
    return "";
  return message;
}
} // namespace

//===----------------------------------------------------------------------===//
// Machines without a usable GPU
//===----------------------------------------------------------------------===//

TEST(NoDriver, EveryCallReportsTheMissingDriver) {
  rt::Status status = cuda::initialize();
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find("cannot load the CUDA driver"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("no NVIDIA driver is installed"),
            std::string::npos);
  // The same answer on every call, and the C ABI does nothing.
  EXPECT_EQ(cuda::initialize().message(), status.message());
  EXPECT_EQ(mgpuMemAlloc(64, mgpuStreamCreate(), 0), nullptr);
  void *module = mgpuModuleLoad(const_cast<char *>("FAKE"), 4);
  EXPECT_EQ(mgpuModuleGetFunction(module, "k"), nullptr);
  mgpuModuleUnload(module);
  EXPECT_NE(takeError().find("cannot load the CUDA driver"), std::string::npos);
  rt::Result<void *> memory = cuda::allocate(16);
  ASSERT_FALSE(memory);
  EXPECT_NE(memory.message().find("cannot load the CUDA driver"),
            std::string::npos);
}

TEST(NoDevice, NamesTheMissingGpu) {
  rt::Status status = cuda::initialize();
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find("no CUDA-capable GPU is visible"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("CUDA_ERROR_NO_DEVICE"), std::string::npos);
}

TEST(OldDriver, KernelsThatDoNotLoadNameTheVersions) {
  // An older driver may still run other programs: it is only named when the
  // kernels do not load.
  ASSERT_TRUE(cuda::initialize()) << cuda::initialize().message();
  static char wrong[] = "ELF the driver cannot load";
  void *module = mgpuModuleLoad(wrong, sizeof(wrong));
  EXPECT_EQ(mgpuModuleGetFunction(module, "k"), nullptr);
  std::string error = takeError();
  EXPECT_NE(error.find("the driver supports CUDA 12.4; the kernels were built "
                       "with CUDA 13: a driver for CUDA 13.0 or newer is "
                       "needed"),
            std::string::npos)
      << error;
  mgpuModuleUnload(module);
}

TEST(OldGpu, NamesTheComputeCapability) {
  rt::Status status = cuda::initialize();
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find("compute capability 7.5"), std::string::npos)
      << status.message();
}

//===----------------------------------------------------------------------===//
// A (fake) GPU
//===----------------------------------------------------------------------===//

TEST(FakeGpu, DeviceFromTheLocalRank) {
  ASSERT_TRUE(cuda::initialize()) << cuda::initialize().message();
  rt::Result<cuda::DeviceInfo> device = cuda::getDevice();
  ASSERT_TRUE(device);
  // OMPI_COMM_WORLD_LOCAL_RANK=3 over 2 devices.
  EXPECT_EQ(device->ordinal, 1);
  EXPECT_EQ(device->count, 2);
  EXPECT_EQ(device->name, "Fake GPU 1");
  EXPECT_EQ(device->major, 9);
  EXPECT_EQ(device->driverVersion, 13000);
}

TEST(FakeGpu, PoolReusesBlocksBySizeClass) {
  auto allocations = driver<int (*)()>("fake_cuda_allocations");
  ASSERT_TRUE(allocations);
  int before = allocations();
  rt::Result<void *> a = cuda::allocate(1000);
  ASSERT_TRUE(a) << a.message();
  cuda::release(*a);
  // 1000 and 1024 bytes share the 1 KiB class: the block is reused.
  rt::Result<void *> b = cuda::allocate(1024);
  ASSERT_TRUE(b);
  EXPECT_EQ(*a, *b);
  EXPECT_EQ(allocations(), before + 1);
  // A block in use is not handed out twice.
  rt::Result<void *> c = cuda::allocate(1000);
  ASSERT_TRUE(c);
  EXPECT_NE(*b, *c);
  cuda::PoolStatistics stats = cuda::getPoolStatistics();
  EXPECT_EQ(stats.inUse, 2048u);
  cuda::release(*b);
  cuda::release(*c);
  EXPECT_EQ(cuda::getPoolStatistics().cached, 2048u);
  EXPECT_EQ(cuda::allocate(0).value(), nullptr);
  EXPECT_EQ(takeError(), "");
}

TEST(FakeGpu, FreeingForeignMemoryIsAnError) {
  int onTheHost = 0;
  cuda::release(&onTheHost);
  EXPECT_NE(takeError().find("freeing GPU memory that the pool did not "
                             "allocate"),
            std::string::npos);
  EXPECT_EQ(takeError(), "");
}

TEST(BadDevice, NamesTheOrdinalAndTheCount) {
  // TRA_CUDA_DEVICE=7 on the fake's 2 devices.
  rt::Status status = cuda::initialize();
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find("TRA_CUDA_DEVICE=7 is not a device ordinal "
                                  "below 2"),
            std::string::npos)
      << status.message();
}

TEST(FakeGpu, CopiesRoundTrip) {
  std::vector<float> host(1000), back(1000, -1.0f);
  for (size_t i = 0; i < host.size(); ++i)
    host[i] = float(i) * 0.5f;
  size_t bytes = host.size() * sizeof(float);
  void *device = cuda::allocate(bytes).value();
  void *other = cuda::allocate(bytes).value();
  ASSERT_TRUE(cuda::copyToDevice(device, host.data(), bytes));
  ASSERT_TRUE(cuda::copyOnDevice(other, device, bytes));
  ASSERT_TRUE(cuda::copyToHost(back.data(), other, bytes));
  EXPECT_EQ(back, host);
  ASSERT_TRUE(cuda::fillZero(other, bytes));
  ASSERT_TRUE(cuda::copyToHost(back.data(), other, bytes));
  EXPECT_EQ(back, std::vector<float>(1000, 0.0f));
  cuda::release(device);
  cuda::release(other);
}

namespace {
/// One strided copy: sizes and the element strides of both buffers.
struct StridedCase {
  std::vector<int64_t> sizes, dstStrides, srcStrides;
};

/// The number of elements a buffer with `strides` spans for `sizes`.
int64_t span(const std::vector<int64_t> &sizes,
             const std::vector<int64_t> &strides) {
  int64_t last = 0;
  for (size_t d = 0; d < sizes.size(); ++d)
    last += (sizes[d] - 1) * strides[d];
  return last + 1;
}
} // namespace

// tra_cuda_copy_strided (runs, merged dimensions, rows of one element, the
// loop over outer dimensions) against an element-by-element copy.
TEST(FakeGpu, StridedCopiesMatchAnElementLoop) {
  const StridedCase cases[] = {
      // A column subview (inner stride 2) into a contiguous buffer.
      {{8, 4}, {4, 1}, {8, 2}},
      // Rows of a wider buffer, into a contiguous one (one 2-D copy).
      {{3, 5, 7}, {35, 7, 1}, {70, 14, 1}},
      // A transposed (column-major) source: rows of one element.
      {{2, 3, 4, 5}, {60, 20, 5, 1}, {1, 2, 6, 24}},
      // A one-element dimension with an arbitrary stride.
      {{4, 1, 6}, {6, 6, 1}, {12, 99, 1}},
      // Contiguous on both sides: one run.
      {{2, 3, 2, 4}, {24, 8, 4, 1}, {24, 8, 4, 1}},
      // Both strided, 3-D: the outer dimension is looped over.
      {{3, 4, 2}, {40, 10, 3}, {9, 2, 1}},
  };
  for (const StridedCase &c : cases) {
    int64_t rank = int64_t(c.sizes.size());
    int64_t srcSpan = span(c.sizes, c.srcStrides);
    int64_t dstSpan = span(c.sizes, c.dstStrides);
    std::vector<float> src(static_cast<size_t>(srcSpan));
    std::vector<float> dst(static_cast<size_t>(dstSpan), -1.0f);
    for (size_t i = 0; i < src.size(); ++i)
      src[i] = float(i);
    std::vector<float> want = dst;
    std::vector<int64_t> index(size_t(rank), 0);
    for (bool done = false; !done;) {
      int64_t from = 0, to = 0;
      for (int64_t d = 0; d < rank; ++d) {
        from += index[d] * c.srcStrides[d];
        to += index[d] * c.dstStrides[d];
      }
      want[size_t(to)] = src[size_t(from)];
      int64_t d = rank;
      while (d > 0 && ++index[d - 1] == c.sizes[d - 1])
        index[--d] = 0;
      done = d == 0;
    }
    void *deviceSrc = cuda::allocate(src.size() * 4).value();
    void *deviceDst = cuda::allocate(dst.size() * 4).value();
    ASSERT_TRUE(cuda::copyToDevice(deviceSrc, src.data(), src.size() * 4));
    ASSERT_TRUE(cuda::copyToDevice(deviceDst, dst.data(), dst.size() * 4));
    int64_t sizes[4] = {1, 1, 1, 1}, dstStrides[4] = {}, srcStrides[4] = {};
    for (int64_t d = 0; d < rank; ++d) {
      sizes[d] = c.sizes[d];
      dstStrides[d] = c.dstStrides[d];
      srcStrides[d] = c.srcStrides[d];
    }
    tra_cuda_copy_strided(deviceDst, deviceSrc, 4, rank, sizes[0], sizes[1],
                          sizes[2], sizes[3], dstStrides[0], dstStrides[1],
                          dstStrides[2], dstStrides[3], srcStrides[0],
                          srcStrides[1], srcStrides[2], srcStrides[3]);
    ASSERT_TRUE(cuda::copyToHost(dst.data(), deviceDst, dst.size() * 4));
    EXPECT_EQ(dst, want) << "sizes[0] = " << c.sizes[0] << ", rank " << rank;
    cuda::release(deviceSrc);
    cuda::release(deviceDst);
  }
  // A rank the call does not take is an error, not a copy.
  tra_cuda_copy_strided(nullptr, nullptr, 4, 5, 1, 1, 1, 1, 0, 0, 0, 0, 0, 0, 0,
                        0);
  EXPECT_NE(takeError().find("tra_cuda_copy_strided: invalid rank 5"),
            std::string::npos);
}

namespace {
/// A row-major `rows` x `cols` matrix of floats, element i = i.
std::vector<float> iota(int64_t rows, int64_t cols) {
  std::vector<float> m(size_t(rows * cols));
  for (size_t i = 0; i < m.size(); ++i)
    m[i] = float(i);
  return m;
}

/// Columns [col, col + width) of the row-major `matrix` with `cols`
/// columns, row-major and contiguous.
std::vector<float> columnBlock(const std::vector<float> &matrix, int64_t cols,
                               int64_t col, int64_t width) {
  std::vector<float> block;
  for (int64_t row = 0; row < int64_t(matrix.size()) / cols; ++row)
    for (int64_t c = col; c < col + width; ++c)
      block.push_back(matrix[size_t(row * cols + c)]);
  return block;
}

/// Starts fetching columns [col, col + width) of the row-major host
/// `matrix` with `cols` columns into the contiguous device buffer `dst`.
int64_t fetchColumns(void *dst, const std::vector<float> &matrix, int64_t cols,
                     int64_t col, int64_t width) {
  int64_t rows = int64_t(matrix.size()) / cols;
  return tra_cuda_fetch_start(dst, matrix.data() + col, 4, 2, rows, width, 1, 1,
                              width, 1, 0, 0, cols, 1, 0, 0);
}

std::vector<float> readBack(void *device, size_t count) {
  std::vector<float> host(count, -1.0f);
  EXPECT_TRUE(cuda::copyToHost(host.data(), device, count * 4));
  return host;
}
} // namespace

// A tile fetch copies on the copy stream, ordered with the compute stream by
// events: the copy stream waits for the work issued before, the compute
// stream for the copy.
TEST(FakeGpu, FetchCopiesAColumnBlockOnTheCopyStream) {
  // Loads the fake driver (whose counters the test reads).
  ASSERT_TRUE(cuda::initialize()) << cuda::initialize().message();
  auto streams = driver<int (*)()>("fake_cuda_streams");
  auto copiesOn = driver<int (*)(int)>("fake_cuda_copies_on_stream");
  auto waits = driver<int (*)()>("fake_cuda_event_waits");
  auto records = driver<int (*)()>("fake_cuda_event_records");
  auto created = driver<int (*)()>("fake_cuda_events_created");
  ASSERT_TRUE(streams && copiesOn && waits && records && created);
  // The weight stays in host memory (a weight tier); 6 x 10, columns 3..6.
  std::vector<float> weight = iota(6, 10);
  void *tile = cuda::allocate(6 * 4 * 4).value();
  ASSERT_TRUE(cuda::fillZero(tile, 6 * 4 * 4));
  int copiesBefore = copiesOn(0), copyStreamCopiesBefore = copiesOn(1),
      waitsBefore = waits(), recordsBefore = records();
  int64_t handle = fetchColumns(tile, weight, 10, 3, 4);
  ASSERT_GE(handle, 0);
  // The copy stream is created by the first fetch.
  EXPECT_EQ(streams(), 2);
  EXPECT_EQ(copiesOn(0), copiesBefore);
  EXPECT_EQ(copiesOn(1), copyStreamCopiesBefore + 1); // One 2-D copy.
  EXPECT_EQ(records(), recordsBefore + 2);
  EXPECT_EQ(waits(), waitsBefore + 1);
  tra_cuda_fetch_wait(handle);
  EXPECT_EQ(waits(), waitsBefore + 2);
  EXPECT_EQ(readBack(tile, 24), columnBlock(weight, 10, 3, 4));
  // Events are reused: a second fetch creates none.
  int createdBefore = created();
  handle = fetchColumns(tile, weight, 10, 6, 4);
  ASSERT_GE(handle, 0);
  tra_cuda_fetch_wait(handle);
  EXPECT_EQ(created(), createdBefore);
  EXPECT_EQ(readBack(tile, 24), columnBlock(weight, 10, 6, 4));
  // A device source, and an empty region (a handle all the same).
  void *copy = cuda::allocate(6 * 4 * 4).value();
  handle = tra_cuda_fetch_start(copy, tile, 4, 1, 24, 1, 1, 1, 1, 0, 0, 0, 1, 0,
                                0, 0);
  ASSERT_GE(handle, 0);
  int64_t empty = tra_cuda_fetch_start(copy, tile, 4, 2, 6, 0, 1, 1, 4, 1, 0, 0,
                                       4, 1, 0, 0);
  ASSERT_GE(empty, 0);
  EXPECT_NE(empty, handle);
  tra_cuda_fetch_wait(empty);
  tra_cuda_fetch_wait(handle);
  EXPECT_EQ(readBack(copy, 24), columnBlock(weight, 10, 6, 4));
  EXPECT_EQ(takeError(), "");
  cuda::release(tile);
  cuda::release(copy);
}

TEST(FakeGpu, TwoFetchesInFlightAreWaitedForInEitherOrder) {
  // Loads the fake driver (whose counters the test reads).
  ASSERT_TRUE(cuda::initialize()) << cuda::initialize().message();
  auto waits = driver<int (*)()>("fake_cuda_event_waits");
  ASSERT_TRUE(waits);
  std::vector<float> weight = iota(8, 12);
  void *a = cuda::allocate(8 * 5 * 4).value();
  void *b = cuda::allocate(8 * 5 * 4).value();
  for (bool aFirst : {true, false}) {
    int64_t first = aFirst ? 0 : 7;
    int64_t fetchA = fetchColumns(a, weight, 12, first, 5);
    int64_t fetchB = fetchColumns(b, weight, 12, 7 - first, 5);
    ASSERT_GE(fetchA, 0);
    ASSERT_GE(fetchB, 0);
    EXPECT_NE(fetchA, fetchB);
    int waitsBefore = waits();
    if (aFirst) {
      tra_cuda_fetch_wait(fetchA);
      tra_cuda_fetch_wait(fetchB);
    } else {
      tra_cuda_fetch_wait(fetchB);
      tra_cuda_fetch_wait(fetchA);
    }
    EXPECT_EQ(waits(), waitsBefore + 2);
    EXPECT_EQ(readBack(a, 40), columnBlock(weight, 12, first, 5));
    EXPECT_EQ(readBack(b, 40), columnBlock(weight, 12, 7 - first, 5));
    ASSERT_EQ(takeError(), "");
  }
  cuda::release(a);
  cuda::release(b);
}

TEST(FakeGpu, WaitingForAnUnknownFetchIsAnError) {
  ASSERT_TRUE(cuda::initialize()) << cuda::initialize().message();
  tra_cuda_fetch_wait(12345);
  std::string error = takeError();
  EXPECT_NE(error.find("tra_cuda_fetch_wait: no tile fetch has handle 12345"),
            std::string::npos)
      << error;
  // The -1 of a failed start, and a fetch waited for twice.
  tra_cuda_fetch_wait(-1);
  EXPECT_NE(
      takeError().find("tra_cuda_fetch_wait: no tile fetch has handle -1"),
      std::string::npos);
  std::vector<float> weight = iota(2, 2);
  void *tile = cuda::allocate(16).value();
  int64_t handle = fetchColumns(tile, weight, 2, 0, 2);
  ASSERT_GE(handle, 0);
  tra_cuda_fetch_wait(handle);
  EXPECT_EQ(takeError(), "");
  tra_cuda_fetch_wait(handle);
  EXPECT_NE(
      takeError().find("no tile fetch has handle " + std::to_string(handle)),
      std::string::npos);
  cuda::release(tile);
}

TEST(FakeGpu, FetchesAfterAnErrorDoNothing) {
  // Loads the fake driver (whose counters the test reads).
  ASSERT_TRUE(cuda::initialize()) << cuda::initialize().message();
  auto copiesOn = driver<int (*)(int)>("fake_cuda_copies_on_stream");
  auto failRecord = driver<void (*)(int)>("fake_cuda_fail_next_event_record");
  ASSERT_TRUE(copiesOn && failRecord);
  std::vector<float> weight = iota(4, 4);
  void *tile = cuda::allocate(32).value();
  ASSERT_TRUE(cuda::fillZero(tile, 32));
  // A pending error: the fetch returns -1 and copies nothing, and waits
  // record no error of their own.
  int onTheHost = 0;
  cuda::release(&onTheHost);
  int copiesBefore = copiesOn(1);
  EXPECT_EQ(fetchColumns(tile, weight, 4, 1, 2), -1);
  EXPECT_EQ(copiesOn(1), copiesBefore);
  tra_cuda_fetch_wait(-1);
  std::string error = takeError();
  EXPECT_NE(error.find("freeing GPU memory that the pool did not allocate"),
            std::string::npos)
      << error;
  EXPECT_EQ(readBack(tile, 8), std::vector<float>(8, 0.0f));
  // Errors of the fetch itself: invalid arguments and a failing driver
  // call.
  EXPECT_EQ(tra_cuda_fetch_start(tile, weight.data(), 4, 0, 1, 1, 1, 1, 0, 0, 0,
                                 0, 0, 0, 0, 0),
            -1);
  EXPECT_NE(takeError().find("tra_cuda_fetch_start: invalid rank 0"),
            std::string::npos);
  failRecord(700); // CUDA_ERROR_ILLEGAL_ADDRESS
  EXPECT_EQ(fetchColumns(tile, weight, 4, 1, 2), -1);
  error = takeError();
  EXPECT_NE(error.find("starting a tile fetch (cuEventRecord): "
                       "CUDA_ERROR_ILLEGAL_ADDRESS"),
            std::string::npos)
      << error;
  // And fetches work again once the error is taken.
  int64_t handle = fetchColumns(tile, weight, 4, 1, 2);
  ASSERT_GE(handle, 0);
  tra_cuda_fetch_wait(handle);
  EXPECT_EQ(readBack(tile, 8), columnBlock(weight, 4, 1, 2));
  EXPECT_EQ(takeError(), "");
  cuda::release(tile);
}

// Moves between GPUs need the job's GPUs connected (the driver does it).
// Host memory that fetches copy from is pinned while it is used, and
// unpinned once, by the pointer it was pinned by.
TEST(FakeGpu, PinnedHostMemoryIsUnpinnedOnce) {
  // Loads the fake driver (whose counters the test reads).
  ASSERT_TRUE(cuda::initialize()) << cuda::initialize().message();
  auto pinnedBytes = driver<size_t (*)()>("fake_cuda_pinned_bytes");
  auto pinnedRanges = driver<int (*)()>("fake_cuda_pinned_ranges");
  auto flags = driver<unsigned (*)()>("fake_cuda_last_pin_flags");
  ASSERT_TRUE(pinnedBytes && pinnedRanges && flags);
  // The accelerator of compiled executables and the engine pins with these.
  EXPECT_EQ(cuda::getAccelerator().pinHost, &cuda::pinHostMemory);
  EXPECT_EQ(cuda::getAccelerator().unpinHost, &cuda::unpinHostMemory);
  // Three pages; two tensors of 1.5 pages each share the middle one.
  char *memory = static_cast<char *>(std::aligned_alloc(4096, 3 * 4096));
  ASSERT_TRUE(memory);
  ASSERT_TRUE(cuda::pinHostMemory(memory, 6144));
  EXPECT_EQ(pinnedBytes(), 6144u);
  EXPECT_EQ(flags(), 0u);
  rt::Status twice = cuda::pinHostMemory(memory, 6144);
  ASSERT_FALSE(twice);
  EXPECT_NE(twice.message().find("pinned already"), std::string::npos)
      << twice.message();
  // The driver refuses the second tensor's range (it shares a page with the
  // first one): its pages the first does not pin are pinned instead.
  ASSERT_TRUE(cuda::pinHostMemory(memory + 6144, 6144));
  EXPECT_EQ(pinnedRanges(), 2);
  EXPECT_EQ(pinnedBytes(), 6144u + 4096u);
  cuda::unpinHostMemory(memory + 6144);
  EXPECT_EQ(pinnedBytes(), 6144u);
  // Unpinning again, or memory never pinned: nothing.
  cuda::unpinHostMemory(memory + 6144);
  cuda::unpinHostMemory(memory + 1);
  EXPECT_EQ(pinnedBytes(), 6144u);
  cuda::unpinHostMemory(memory);
  EXPECT_EQ(pinnedBytes(), 0u);
  EXPECT_EQ(pinnedRanges(), 0);
  EXPECT_EQ(takeError(), "");
  std::free(memory);
}

// Pinning is an optimisation: a failure is returned, the memory stays
// pageable, and it is no error of the GPU (later calls still work).
TEST(FakeGpu, PinFailuresAreStatusesNotGpuErrors) {
  ASSERT_TRUE(cuda::initialize()) << cuda::initialize().message();
  auto failRegisters = driver<void (*)(int)>("fake_cuda_fail_host_registers");
  auto readOnly = driver<void (*)(int)>("fake_cuda_set_read_only_host_memory");
  auto pinnedBytes = driver<size_t (*)()>("fake_cuda_pinned_bytes");
  auto flags = driver<unsigned (*)()>("fake_cuda_last_pin_flags");
  ASSERT_TRUE(failRegisters && readOnly && pinnedBytes && flags);
  std::vector<float> host(1024, 1.5f);
  failRegisters(800); // CUDA_ERROR_NOT_PERMITTED
  rt::Status refused = cuda::pinHostMemory(host.data(), 4096);
  failRegisters(0);
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.message().find("cannot pin 4096 bytes of host memory "
                                   "(cuMemHostRegister: "
                                   "CUDA_ERROR_NOT_PERMITTED"),
            std::string::npos)
      << refused.message();
  EXPECT_EQ(pinnedBytes(), 0u);
  EXPECT_EQ(takeError(), "");
  cuda::unpinHostMemory(host.data());
  // The memory is still copied, pageable.
  void *device = cuda::allocate(4096).value();
  ASSERT_TRUE(cuda::copyToDevice(device, host.data(), 4096));
  EXPECT_EQ(readBack(device, 1024), host);
  cuda::release(device);
  // Nothing to pin, and a range inside one pinned already.
  EXPECT_FALSE(cuda::pinHostMemory(nullptr, 16));
  EXPECT_FALSE(cuda::pinHostMemory(host.data(), 0));
  ASSERT_TRUE(cuda::pinHostMemory(host.data(), 4096));
  rt::Status inside = cuda::pinHostMemory(host.data() + 10, 100);
  ASSERT_FALSE(inside);
  EXPECT_NE(inside.message().find("CUDA_ERROR_HOST_MEMORY_ALREADY_REGISTERED"),
            std::string::npos)
      << inside.message();
  cuda::unpinHostMemory(host.data() + 10);
  EXPECT_EQ(pinnedBytes(), 4096u);
  cuda::unpinHostMemory(host.data());
  EXPECT_EQ(pinnedBytes(), 0u);
  // A read-only mapping (.npy inputs, checkpoints) is pinned read-only.
  readOnly(1);
  ASSERT_TRUE(cuda::pinHostMemory(host.data(), 4096));
  readOnly(0);
  EXPECT_EQ(flags(), 8u); // CU_MEMHOSTREGISTER_READ_ONLY
  cuda::unpinHostMemory(host.data());
  EXPECT_EQ(pinnedBytes(), 0u);
  EXPECT_EQ(takeError(), "");
}

TEST(FakeGpu, MovesBeforeConnectingAreAnError) {
  float value = 1.0f;
  int32_t ranks[] = {0, 1};
  tra_cuda_allreduce(&value, 1, TRA_CUDA_F32, 0, ranks, 2);
  EXPECT_NE(takeError().find("ncclAllReduce: the GPUs of the job are not "
                             "connected"),
            std::string::npos);
  tra_cuda_send(&value, 4, 1, 0);
  EXPECT_NE(takeError().find("ncclSend: the GPUs of the job are not connected"),
            std::string::npos);
}

TEST(FakeGpu, OutOfMemoryReleasesTheCacheThenNamesTheSizes) {
  auto setLimit = driver<void (*)(size_t)>("fake_cuda_set_memory_limit");
  auto frees = driver<int (*)()>("fake_cuda_frees");
  ASSERT_TRUE(setLimit && frees);
  cuda::releaseCachedMemory();
  setLimit(size_t(8) << 20);
  // 6 MiB in the cache, then 6 MiB more: the cache is freed to make room.
  void *a = cuda::allocate(size_t(6) << 20).value();
  cuda::release(a);
  int freesBefore = frees();
  rt::Result<void *> b = cuda::allocate(size_t(5) << 20);
  ASSERT_TRUE(b) << b.message();
  // 5 MiB rounds up to the 6 MiB class: the cached block is reused.
  EXPECT_EQ(*b, a);
  rt::Result<void *> c = cuda::allocate(size_t(4) << 20);
  ASSERT_FALSE(c);
  EXPECT_NE(c.message().find("cannot allocate 4 MiB of GPU memory"),
            std::string::npos)
      << c.message();
  EXPECT_NE(c.message().find("6 MiB in use by this program"), std::string::npos)
      << c.message();
  EXPECT_NE(c.message().find("CUDA_ERROR_OUT_OF_MEMORY"), std::string::npos);
  cuda::release(*b);
  rt::Result<void *> d = cuda::allocate(size_t(4) << 20);
  ASSERT_TRUE(d) << d.message();
  EXPECT_GT(frees(), freesBefore);
  cuda::release(*d);
  setLimit(SIZE_MAX);
}

TEST(FakeGpu, ModulesLoadWhenAKernelIsFirstLookedUp) {
  auto loads = driver<int (*)()>("fake_cuda_module_loads");
  auto launches = driver<int (*)()>("fake_cuda_launches");
  auto last = driver<const char *(*)()>("fake_cuda_last_launch");
  auto grid = driver<unsigned (*)(int)>("fake_cuda_last_grid");
  ASSERT_TRUE(loads && launches && last && grid);
  static char image[] = "FAKE cubin";
  int loadsBefore = loads();
  void *module = mgpuModuleLoad(image, sizeof(image));
  EXPECT_EQ(loads(), loadsBefore);
  void *f = mgpuModuleGetFunction(module, "add_kernel");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(mgpuModuleGetFunction(module, "add_kernel"), f);
  EXPECT_EQ(loads(), loadsBefore + 1);
  int launchesBefore = launches();
  void *stream = mgpuStreamCreate();
  mgpuLaunchKernel(f, 4, 2, 1, 128, 1, 1, 0, stream, nullptr, nullptr, 0);
  mgpuStreamSynchronize(stream);
  mgpuStreamDestroy(stream);
  EXPECT_EQ(launches(), launchesBefore + 1);
  EXPECT_STREQ(last(), "add_kernel");
  EXPECT_EQ(grid(0), 4u);
  EXPECT_EQ(grid(1), 2u);
  // An empty grid launches nothing.
  mgpuLaunchKernel(f, 0, 1, 1, 128, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  EXPECT_EQ(launches(), launchesBefore + 1);
  EXPECT_EQ(takeError(), "");
  mgpuModuleUnload(module);
}

TEST(FakeGpu, ErrorsNameTheKernelAndStopLaterWork) {
  auto failLaunch = driver<void (*)(int)>("fake_cuda_fail_next_launch");
  auto failSync = driver<void (*)(int)>("fake_cuda_fail_next_sync");
  auto launches = driver<int (*)()>("fake_cuda_launches");
  ASSERT_TRUE(failLaunch && failSync && launches);
  static char image[] = "FAKE cubin";
  void *module = mgpuModuleLoad(image, sizeof(image));
  void *f = mgpuModuleGetFunction(module, "softmax_kernel");
  ASSERT_NE(f, nullptr);

  failLaunch(701); // CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES
  mgpuLaunchKernel(f, 1, 1, 1, 1024, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  // After the error, nothing more is launched until it is taken.
  int launchesAfterError = launches();
  mgpuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  EXPECT_EQ(launches(), launchesAfterError);
  std::string error = takeError();
  EXPECT_NE(error.find("launching GPU kernel softmax_kernel (grid 1x1x1, "
                       "block 1024x1x1)"),
            std::string::npos)
      << error;
  EXPECT_NE(error.find("CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES"),
            std::string::npos);
  EXPECT_EQ(takeError(), "");

  // An error the stream reports later names the last kernel launched.
  mgpuLaunchKernel(f, 1, 1, 1, 32, 1, 1, 0, nullptr, nullptr, nullptr, 0);
  failSync(700); // CUDA_ERROR_ILLEGAL_ADDRESS
  rt::Status status = cuda::synchronize();
  ASSERT_FALSE(status);
  EXPECT_NE(status.message().find("the last kernel launched was "
                                  "softmax_kernel"),
            std::string::npos)
      << status.message();
  EXPECT_NE(status.message().find("an illegal memory access"),
            std::string::npos);

  // A kernel the module lacks, and a module the GPU cannot load.
  EXPECT_EQ(mgpuModuleGetFunction(module, "missing_kernel"), nullptr);
  error = takeError();
  EXPECT_NE(error.find("no GPU kernel missing_kernel"), std::string::npos)
      << error;
  static char wrong[] = "ELF for another GPU";
  void *bad = mgpuModuleLoad(wrong, sizeof(wrong));
  EXPECT_EQ(mgpuModuleGetFunction(bad, "k"), nullptr);
  error = takeError();
  EXPECT_NE(error.find("cannot load the program's GPU kernels on GPU 1 "
                       "(Fake GPU 1, sm_90)"),
            std::string::npos)
      << error;
  mgpuModuleUnload(bad);
  mgpuModuleUnload(module);
}

namespace {
/// Row-major C = op(A) op(B) + beta C in double, with leading dimensions.
void referenceGemm(int64_t tA, int64_t tB, int64_t m, int64_t n, int64_t k,
                   float alpha, const float *a, int64_t lda, const float *b,
                   int64_t ldb, float beta, const float *c0, float *c,
                   int64_t ldc) {
  for (int64_t i = 0; i < m; ++i)
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t l = 0; l < k; ++l) {
        double x = tA ? a[l * lda + i] : a[i * lda + l];
        double y = tB ? b[j * ldb + l] : b[l * ldb + j];
        sum += x * y;
      }
      c[i * ldc + j] = float(alpha * sum + beta * c0[i * ldc + j]);
    }
}
} // namespace

TEST(FakeGpu, GemmMapsRowMajorProductsOntoCublas) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1, 1);
  const int64_t m = 5, n = 7, k = 3, batch = 2;
  for (int64_t tA : {0, 1})
    for (int64_t tB : {0, 1}) {
      // Padded leading dimensions and batch strides beyond the matrices.
      int64_t lda = (tA ? m : k) + 2, ldb = (tB ? k : n) + 1, ldc = n + 3;
      int64_t sa = (tA ? k : m) * lda + 4, sb = (tB ? n : k) * ldb + 5,
              sc = m * ldc + 6;
      std::vector<float> a(batch * sa), b(batch * sb), c(batch * sc), want;
      for (float &x : a)
        x = dist(rng);
      for (float &x : b)
        x = dist(rng);
      for (float &x : c)
        x = dist(rng);
      want = c;
      for (int64_t p = 0; p < batch; ++p)
        referenceGemm(tA, tB, m, n, k, 1.5f, a.data() + p * sa, lda,
                      b.data() + p * sb, ldb, 0.5f, c.data() + p * sc,
                      want.data() + p * sc, ldc);
      tra_cuda_gemm(TRA_CUDA_F32, TRA_CUDA_F32, batch, tA, tB, m, n, k, 1.5f,
                    a.data(), lda, sa, b.data(), ldb, sb, 0.5f, c.data(), ldc,
                    sc);
      ASSERT_EQ(takeError(), "");
      for (int64_t p = 0; p < batch; ++p)
        for (int64_t i = 0; i < m; ++i)
          for (int64_t j = 0; j < n; ++j) {
            size_t at = p * sc + i * ldc + j;
            EXPECT_NEAR(c[at], want[at], 1e-5)
                << "transA " << tA << " transB " << tB << " at " << p << ","
                << i << "," << j;
          }
    }
}

TEST(FakeGpu, GemmElementTypesAndSizeChecks) {
  auto lastType = fake<int (*)()>(TRA_FAKE_CUBLAS, "fake_cublas_last_type");
  auto lastOutput =
      fake<int (*)()>(TRA_FAKE_CUBLAS, "fake_cublas_last_output_type");
  ASSERT_TRUE(lastType && lastOutput);
  uint16_t a[4] = {0}, b[4] = {0}, c[4] = {0};
  float c32[4] = {0};
  tra_cuda_gemm(TRA_CUDA_BF16, TRA_CUDA_BF16, 1, 0, 0, 2, 2, 2, 1, a, 2, 0, b,
                2, 0, 0, c, 2, 0);
  EXPECT_EQ(lastType(), 14); // CUDA_R_16BF
  EXPECT_EQ(lastOutput(), 14);
  // bf16 and f16 products accumulate into f32 outputs too.
  tra_cuda_gemm(TRA_CUDA_BF16, TRA_CUDA_F32, 1, 0, 0, 2, 2, 2, 1, a, 2, 0, b, 2,
                0, 0, c32, 2, 0);
  EXPECT_EQ(lastType(), 14);
  EXPECT_EQ(lastOutput(), 0); // CUDA_R_32F
  tra_cuda_gemm(TRA_CUDA_F16, TRA_CUDA_F16, 1, 0, 0, 2, 2, 2, 1, a, 2, 0, b, 2,
                0, 0, c, 2, 0);
  EXPECT_EQ(lastType(), 2); // CUDA_R_16F
  EXPECT_EQ(takeError(), "");
  tra_cuda_gemm(7, 7, 1, 0, 0, 2, 2, 2, 1, a, 2, 0, b, 2, 0, 0, c, 2, 0);
  EXPECT_NE(takeError().find("unsupported element types 7 -> 7"),
            std::string::npos);
  tra_cuda_gemm(TRA_CUDA_F32, TRA_CUDA_BF16, 1, 0, 0, 2, 2, 2, 1, a, 2, 0, b, 2,
                0, 0, c, 2, 0);
  EXPECT_NE(takeError().find("unsupported element types 0 -> 2"),
            std::string::npos);
  tra_cuda_gemm(TRA_CUDA_F32, TRA_CUDA_F32, 1, 0, 0, int64_t(1) << 31, 2, 2, 1,
                a, 2, 0, b, 2, 0, 0, c, 2, 0);
  EXPECT_NE(takeError().find("does not fit cuBLAS's 32-bit arguments"),
            std::string::npos);
}
