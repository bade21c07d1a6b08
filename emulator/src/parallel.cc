// parallel.cc - the helper pool (parallel.h). Every field a helper reads of a published loop is an atomic
// with sequentially consistent order: the caller closes the loop's state before it rewrites the fields,
// so a helper that read a newer loop's fields sees its claim's compare-exchange fail, and one whose claim
// succeeds knows the caller is still waiting for that task (its fields are still valid).
#include "parallel.h"

#include <new>
#include <system_error>

#include "spin.h"

namespace accel_emu {

namespace {
constexpr uint32_t kClosed = 0xFFFFFFFFu;  // a task index no loop reaches: nothing to claim
}

const Par& Par::serial() {
    static const Par one;
    return one;
}

void Par::run(int64_t tasks, TaskFn fn, void* ctx) const { pool_->run(core_, tasks, fn, ctx); }

HelperPool::HelperPool(uint32_t cores, uint32_t threads, uint32_t spin_us)
    : threads_(threads), spin_ns_(spin_us * 1000ull), slots_(new Slot[cores]), pars_(cores) {
    for (uint32_t c = 0; c < cores; ++c) {
        pars_[c].pool_ = this;
        pars_[c].core_ = static_cast<int>(c);
        pars_[c].workers_ = static_cast<int>(threads);
    }
}

std::unique_ptr<HelperPool> HelperPool::start(uint32_t cores, uint32_t threads, uint32_t spin_us) {
    std::unique_ptr<HelperPool> p(new (std::nothrow) HelperPool(cores, threads, spin_us));
    if (!p) return nullptr;
    try {
        for (uint32_t c = 0; c < cores; ++c)
            for (uint32_t w = 1; w < threads; ++w)
                p->helpers_.emplace_back(
                    [q = p.get(), c, w] { q->helper_loop(static_cast<int>(c), static_cast<int>(w)); });
    } catch (const std::exception&) {
        return nullptr;  // the destructor joins the helpers that started
    }
    return p;
}

HelperPool::~HelperPool() {
    stopping_.store(true);
    for (size_t c = 0; c < pars_.size(); ++c) {
        Slot& s = slots_[c];
        std::lock_guard<std::mutex> lock(s.sleep_mutex);
        s.epoch.fetch_add(1);  // no helper goes back to sleep on the epoch it saw
        s.wake.notify_all();
    }
    for (std::thread& t : helpers_) t.join();
}

bool HelperPool::claim_and_run(Slot& s, uint32_t gen, int worker) {
    bool ran = false;
    for (;;) {
        uint64_t st = s.state.load();
        if (static_cast<uint32_t>(st >> 32) != gen) return ran;
        const uint32_t t = static_cast<uint32_t>(st);
        if (t == kClosed || static_cast<int64_t>(t) >= s.tasks.load()) return ran;
        if (!s.state.compare_exchange_weak(st, st + 1)) continue;
        s.fn.load()(s.ctx.load(), static_cast<int64_t>(t), worker);
        s.done.fetch_add(1);
        ran = true;
    }
}

void HelperPool::run(int core, int64_t tasks, Par::TaskFn fn, void* ctx) {
    Slot& s = slots_[static_cast<size_t>(core)];
    const uint32_t gen = ++s.generation == 0 ? ++s.generation : s.generation;  // 0: the helpers' "none seen"
    s.state.store(static_cast<uint64_t>(gen) << 32 | kClosed);
    s.fn.store(fn);
    s.ctx.store(ctx);
    s.tasks.store(tasks);
    s.done.store(0);
    s.state.store(static_cast<uint64_t>(gen) << 32);
    s.epoch.store(gen);
    if (s.sleepers.load() > 0) {
        // Taking the mutex orders this wake after a helper's check of epoch (made under it) and its wait.
        {
            std::lock_guard<std::mutex> lock(s.sleep_mutex);
        }
        s.wake.notify_all();
    }
    claim_and_run(s, gen, 0);
    // Every task is claimed; those helpers still run end within one task's time (unless the host took
    // their CPU: hence the yields).
    for (unsigned i = 1; s.done.load() < tasks; i++) {
        cpu_relax();
        if ((i & 63) == 0) std::this_thread::yield();
    }
}

void HelperPool::helper_loop(int core, int worker) {
    Slot& s = slots_[static_cast<size_t>(core)];
    uint32_t seen = 0;
    auto fresh = [&] { return static_cast<uint32_t>(s.state.load() >> 32) != seen || stopping_.load(); };
    while (!stopping_.load()) {
        if (spin_until(fresh, spin_ns_)) {
            if (stopping_.load()) return;
            const uint64_t st = s.state.load();
            if (static_cast<uint32_t>(st) == kClosed) continue;  // being published: wait until it opens
            seen = static_cast<uint32_t>(st >> 32);
            claim_and_run(s, seen, worker);
            continue;
        }
        std::unique_lock<std::mutex> lock(s.sleep_mutex);
        s.sleepers.fetch_add(1);
        while (s.epoch.load() == seen && !stopping_.load()) s.wake.wait(lock);
        s.sleepers.fetch_sub(1);
    }
}

}  // namespace accel_emu
