/* runcore_state.c - the run core's process-wide state (see accel_runcore.h): the counters, the exit
 * drain's flags and waits, the main thread's identity. */
#include <pthread.h>
#include <stdatomic.h>

#include "runcore_internal.h"

static atomic_llong g_in_flight;         /* jobs submitted and not over (callback jobs: hook returned) */
static atomic_llong g_callbacks_pending; /* callback jobs whose hook has not returned */
static atomic_llong g_hooks_inside;      /* completions past the door check, not yet out of the binding */
static atomic_int g_refuse_jobs;         /* set by the drain: no new jobs */
static atomic_int g_door_closed;         /* set by the drain once it has waited: completions skip the hook */
static atomic_ulong g_main_thread;

accel_status runcore_begin_job(void) {
    atomic_fetch_add(&g_in_flight, 1); /* before the check: the drain either sees this job or refuses it */
    if (atomic_load(&g_refuse_jobs)) {
        atomic_fetch_sub(&g_in_flight, 1);
        return ACCEL_RUNCORE_REFUSED;
    }
    return ACCEL_OK;
}

void runcore_end_job(void) { atomic_fetch_sub(&g_in_flight, 1); }

void runcore_callback_begin(void) { atomic_fetch_add(&g_callbacks_pending, 1); }
void runcore_callback_end(void) { atomic_fetch_sub(&g_callbacks_pending, 1); }

int runcore_hook_enter(void) {
    atomic_fetch_add(&g_hooks_inside, 1); /* before the check: the drain's last wait sees this one */
    return !atomic_load(&g_door_closed);
}

void runcore_hook_leave(void) { atomic_fetch_sub(&g_hooks_inside, 1); }

/* A fork()ed child starts with none of the parent's jobs (their devices stay with the parent, and the
 * driver refuses their handles in the child), so it counts from zero: its exit must not wait for
 * jobs it can never see end. Its one thread, the one that forked, is the interpreter's main thread
 * there (CPython makes it so). */
static void after_fork_in_child(void) {
    atomic_store(&g_in_flight, 0);
    atomic_store(&g_callbacks_pending, 0);
    atomic_store(&g_hooks_inside, 0);
    atomic_store(&g_main_thread, (unsigned long)pthread_self());
}

void accel_runcore_set_main_thread(uint64_t thread_ident) {
    atomic_store(&g_main_thread, (unsigned long)thread_ident);
    static atomic_flag registered = ATOMIC_FLAG_INIT;
    if (!atomic_flag_test_and_set(&registered)) pthread_atfork(NULL, NULL, after_fork_in_child);
}

int accel_runcore_on_main_thread(void) {
    return (unsigned long)pthread_self() == atomic_load_explicit(&g_main_thread, memory_order_relaxed);
}

int64_t accel_runcore_callbacks_pending(void) { return atomic_load(&g_callbacks_pending); }
int accel_runcore_door_open(void) { return !atomic_load(&g_door_closed); }
void runcore_refuse_jobs(void) { atomic_store(&g_refuse_jobs, 1); }
void runcore_close_door(void) { atomic_store(&g_door_closed, 1); }

/* In flight read first: a hook counted in the second read whose job began after the first is one the
 * drain refused (it never reaches a hook), so the difference never reads 0 while a job is on the
 * device; it may read more for a moment (a hook that left between the reads), costing one poll. */
int64_t runcore_jobs_on_device(void) {
    const long long in_flight = atomic_load(&g_in_flight);
    const long long inside = atomic_load(&g_hooks_inside);
    return in_flight > inside ? in_flight - inside : 0;
}

int64_t runcore_hooks_running(void) { return atomic_load(&g_hooks_inside); }
