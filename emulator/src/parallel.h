// parallel.h - intra-job parallelism: the device's one pool of helper threads, threads-1 of them for each
// emulated core, and Par, the parallel-for a kernel gets through KernelArgs::par. A job's ops run on its
// core's thread, which splits an op's work into tasks and runs them with its own helpers, so that when
// every core is busy the device keeps cores*threads host threads and no more.
//
// Bit-identity: the tasks a kernel splits its work into depend on the shapes only (split_parts below),
// not on the thread count, unless every split gives each output element the very same operations (the
// packed conv GEMM's runs of output channels); which worker runs a task changes nothing in its result. So
// a model computes the same bits whatever `threads` is.
//
// Hot path: no allocation, no lock, no exception. Idle helpers poll for `spin_us`, then sleep until the next loop.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace accel_emu {

class HelperPool;

// How many parts a loop over `units` independent units (rows, channels, tiles), costing about `work` in
// all, is split into: at most one per unit and kMaxParts, and each about min_work or more (1 when the
// whole is smaller: tiny tensors are not split, so tiny models do not pay for the pool). Shapes only.
constexpr int64_t kMaxParts = 64;
inline int64_t split_parts(int64_t units, int64_t work, int64_t min_work) {
    int64_t n = min_work > 0 ? work / min_work : units;
    if (n > kMaxParts) n = kMaxParts;
    if (n > units) n = units;
    return n < 1 ? 1 : n;
}
// Part p of `parts` over [0, units): [*begin, *end), the parts as equal as can be.
inline void part_range(int64_t units, int64_t parts, int64_t p, int64_t* begin, int64_t* end) {
    *begin = units * p / parts;
    *end = units * (p + 1) / parts;
}

// The parallel-for of one core (or the serial one: one worker, no helpers).
class Par {
public:
    // Host threads running a task of this core's parallel-for at once: the core's own, and its helpers.
    int workers() const { return workers_; }
    // Calls f(task, worker) once for each task in [0, tasks), worker in [0, workers()), and returns when all
    // have returned. Each worker runs one task at a time, so per-worker scratch is safe.
    template <class F>
    void for_each(int64_t tasks, F&& f) const {
        if (tasks <= 0) return;
        if (tasks == 1 || workers_ == 1) {
            for (int64_t t = 0; t < tasks; ++t) f(t, 0);
            return;
        }
        run(tasks, [](void* c, int64_t t, int w) { (*static_cast<std::remove_reference_t<F>*>(c))(t, w); }, &f);
    }
    // Splits [0, units) into `parts` ranges (part_range) and calls f(begin, end, worker) for each, as for_each.
    template <class F>
    void for_ranges(int64_t units, int64_t parts, F&& f) const {
        for_each(parts, [&](int64_t part, int worker) {
            int64_t begin, end;
            part_range(units, parts, part, &begin, &end);
            f(begin, end, worker);
        });
    }
    // One worker: for kernels run outside a job, and for threads=1.
    static const Par& serial();

private:
    friend class HelperPool;
    using TaskFn = void (*)(void* ctx, int64_t task, int worker);
    void run(int64_t tasks, TaskFn fn, void* ctx) const;
    HelperPool* pool_ = nullptr;
    int core_ = 0;
    int workers_ = 1;
};

// Work sizes (in multiply-adds or element operations) below which a part is not worth a hand-off to a
// helper (a few microseconds of work each).
constexpr int64_t kMinMacsPerPart = 256 * 1024;
constexpr int64_t kMinElemsPerPart = 32 * 1024;

class HelperPool {
public:
    // cores * (threads - 1) helper threads (none when threads == 1). Null if a thread cannot start.
    static std::unique_ptr<HelperPool> start(uint32_t cores, uint32_t threads, uint32_t spin_us);
    ~HelperPool();  // stops and joins the helpers
    HelperPool(const HelperPool&) = delete;
    HelperPool& operator=(const HelperPool&) = delete;
    // Core c's parallel-for (valid while the pool lives).
    const Par& for_core(int core) const { return pars_[static_cast<size_t>(core)]; }

private:
    friend class Par;
    struct alignas(64) Slot {
        // The published loop: generation << 32 | the next unclaimed task (kClosed while the caller rewrites
        // the fields below). A helper claims a task by a compare-exchange that also checks the generation,
        // so a helper that read a loop's fields late never runs a task of another loop.
        std::atomic<uint64_t> state{0};
        std::atomic<Par::TaskFn> fn{nullptr};
        std::atomic<void*> ctx{nullptr};
        std::atomic<int64_t> tasks{0};
        std::atomic<int64_t> done{0};
        std::atomic<uint32_t> epoch{0};     // the last loop's generation: what sleeping helpers wait for
        std::atomic<uint32_t> sleepers{0};  // helpers asleep (or about to be)
        std::mutex sleep_mutex;
        std::condition_variable wake;
        uint32_t generation = 0;            // the core's thread's alone
    };
    HelperPool(uint32_t cores, uint32_t threads, uint32_t spin_us);
    void helper_loop(int core, int worker);
    void run(int core, int64_t tasks, Par::TaskFn fn, void* ctx);
    static bool claim_and_run(Slot& s, uint32_t gen, int worker);

    const uint32_t threads_;
    const uint64_t spin_ns_;
    std::unique_ptr<Slot[]> slots_;
    std::vector<Par> pars_;
    std::atomic<bool> stopping_{false};
    std::vector<std::thread> helpers_;
};

}  // namespace accel_emu
