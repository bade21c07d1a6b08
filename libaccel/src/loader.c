/* loader.c - finds drivers at run time, checks their ABI version, and routes URIs to them.
 *
 * Like the OpenCL ICD and Vulkan loaders: drivers are shared libraries found in a search path, each
 * exporting one entry point that returns a versioned function table. Drivers stay loaded for the life
 * of the process (unloading code that may still have threads or callbacks in flight is never safe). */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

enum { MAX_DRIVERS = 64, PATH_CAPACITY = 4096, NOTE_CAPACITY = 512 };

#define DRIVER_PREFIX "libaccel_driver_"
#define DRIVER_SUFFIX ".so"

/* A driver file that was found but could not be used, remembered so that opening its scheme explains
 * why instead of saying "not found". */
typedef struct rejected_driver {
    char scheme[64];
    accel_status status;
    char why[NOTE_CAPACITY];
} rejected_driver;

static const accel_driver_table* usable[MAX_DRIVERS];
static size_t usable_count;
static rejected_driver rejected[MAX_DRIVERS];
static size_t rejected_count;
static char searched[PATH_CAPACITY]; /* the directories searched, for error messages */

static void host_set_error(accel_status status, const char* message) { accel_set_error(status, message); }

static const accel_host_api host_api = {sizeof(accel_host_api), ACCEL_ABI_VERSION, host_set_error};

static void reject(const char* scheme, accel_status status, const char* why) {
    if (rejected_count >= MAX_DRIVERS) return;
    rejected_driver* r = &rejected[rejected_count++];
    snprintf(r->scheme, sizeof r->scheme, "%s", scheme);
    r->status = status;
    snprintf(r->why, sizeof r->why, "%s", why);
}

/* Every function pointer of the version-1.0 table must be set. */
static int table_complete(const accel_driver_table* t) {
    const char* first = (const char*)&t->device_open;
    const char* end = (const char*)t + ACCEL_DRIVER_TABLE_SIZE_1_0;
    for (const char* p = first; p < end; p += sizeof(void (*)(void))) {
        void (*fn)(void);
        memcpy(&fn, p, sizeof fn);
        if (!fn) return 0;
    }
    return 1;
}

/* Why a driver's answer cannot be used, or NULL when it can. */
static const char* table_problem(accel_status status, const accel_driver_table* t) {
    if (status != ACCEL_OK) return "its entry point failed";
    if (!t) return "its entry point returned no table";
    if ((t->abi_version >> 16) != ACCEL_ABI_VERSION_MAJOR) return "it is built for another major ABI version";
    if (t->struct_size < ACCEL_DRIVER_TABLE_SIZE_1_0) return "its function table is smaller than ABI 1.0's";
    if (!t->scheme || !t->scheme[0]) return "its table names no URI scheme";
    if (!table_complete(t)) return "its function table has unset entries";
    return NULL;
}

static int already_usable(const char* scheme) {
    for (size_t i = 0; i < usable_count; i++)
        if (strcmp(usable[i]->scheme, scheme) == 0) return 1;
    return 0;
}

/* What a path that is not a regular file is, for the note that skips it (dlopen would block on a
 * FIFO or a device node, and fail on a directory). */
static const char* not_a_file(const struct stat* st) {
    if (S_ISREG(st->st_mode)) return NULL;
    if (S_ISFIFO(st->st_mode)) return "a FIFO";
    if (S_ISDIR(st->st_mode)) return "a directory";
    if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) return "a device node";
    if (S_ISSOCK(st->st_mode)) return "a socket";
    return "not a regular file";
}

static void try_driver(const char* path) {
    const char* base = strrchr(path, '/');
    base = base ? base + 1 : path;
    char scheme[64] = "";
    size_t base_len = strlen(base), pre = strlen(DRIVER_PREFIX), suf = strlen(DRIVER_SUFFIX);
    if (base_len > pre + suf && base_len - pre - suf < sizeof scheme) {
        memcpy(scheme, base + pre, base_len - pre - suf);
        scheme[base_len - pre - suf] = '\0';
    }
    if (usable_count >= MAX_DRIVERS) return;
    char why[NOTE_CAPACITY];
    struct stat st;
    const char* what = stat(path, &st) != 0 ? "missing" : not_a_file(&st);
    if (what) {
        snprintf(why, sizeof why, "driver %s was skipped: it is %s, not a regular file", path, what);
        reject(scheme, ACCEL_ERR_DEVICE, why);
        return;
    }
    void* lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
        const char* err = dlerror();
        snprintf(why, sizeof why, "driver %s could not be loaded: %s", path, err ? err : "unknown error");
        reject(scheme, ACCEL_ERR_DEVICE, why);
        return;
    }
    accel_driver_entry_fn entry;
    void* sym = dlsym(lib, ACCEL_DRIVER_ENTRY_SYMBOL);
    memcpy(&entry, &sym, sizeof entry);
    if (!entry) {
        snprintf(why, sizeof why, "driver %s does not export %s", path, ACCEL_DRIVER_ENTRY_SYMBOL);
        reject(scheme, ACCEL_ERR_ABI_MISMATCH, why);
        dlclose(lib);
        return;
    }
    const accel_driver_table* table = NULL;
    accel_status status = entry(ACCEL_ABI_VERSION, &host_api, &table);
    const char* problem = table_problem(status, table);
    if (problem) {
        uint32_t v = table ? table->abi_version : 0;
        snprintf(why, sizeof why, "driver %s was refused: %s (driver ABI %u.%u, libaccel ABI %u.%u)", path, problem,
                 (unsigned)(v >> 16), (unsigned)(v & 0xFFFF), ACCEL_ABI_VERSION_MAJOR, ACCEL_ABI_VERSION_MINOR);
        reject(table && table->scheme && table->scheme[0] ? table->scheme : scheme, ACCEL_ERR_ABI_MISMATCH, why);
        dlclose(lib);
        return;
    }
    if (already_usable(table->scheme)) return; /* the first one found on the search path wins */
    usable[usable_count++] = table;
}

static int ends_with(const char* s, const char* suffix) {
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int compare_names(const void* a, const void* b) { return strcmp(*(char* const*)a, *(char* const*)b); }

static void scan_directory(const char* dir) {
    DIR* d = opendir(dir);
    if (!d) return;
    char* names[MAX_DRIVERS];
    size_t n = 0;
    struct dirent* e;
    while ((e = readdir(d)) != NULL && n < MAX_DRIVERS) {
        if (strncmp(e->d_name, DRIVER_PREFIX, strlen(DRIVER_PREFIX)) == 0 && ends_with(e->d_name, DRIVER_SUFFIX))
            names[n++] = strdup(e->d_name);
    }
    closedir(d);
    /* Sorted, so that which driver wins a duplicated scheme does not depend on the file system. */
    qsort(names, n, sizeof names[0], compare_names);
    for (size_t i = 0; i < n; i++) {
        if (!names[i]) continue;
        char path[PATH_CAPACITY];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        try_driver(path);
        free(names[i]);
    }
}

static void scan_entry(const char* entry) {
    struct stat st;
    if (stat(entry, &st) != 0) return;
    if (S_ISDIR(st.st_mode)) scan_directory(entry);
    else try_driver(entry);
}

/* The list only serves error messages: a path that does not fit is left out. */
static void append_searched(const char* what) {
    size_t used = strlen(searched), len = strlen(what);
    if (used + len + 2 > sizeof searched) return;
    if (used) searched[used++] = ':';
    memcpy(searched + used, what, len + 1);
}

static void scan_drivers(void) {
    const char* env = getenv("ACCEL_DRIVER_PATH");
    if (env && env[0]) {
        char* copy = strdup(env);
        if (!copy) return;
        char* save = NULL;
        for (char* part = strtok_r(copy, ":", &save); part; part = strtok_r(NULL, ":", &save)) {
            append_searched(part);
            scan_entry(part);
        }
        free(copy);
        return;
    }
    Dl_info info;
    if (dladdr((void*)&accel_driver_count, &info) && info.dli_fname) {
        char dir[PATH_CAPACITY];
        snprintf(dir, sizeof dir, "%s", info.dli_fname);
        char* slash = strrchr(dir, '/');
        if (slash) *slash = '\0';
        else snprintf(dir, sizeof dir, ".");
        char path[PATH_CAPACITY + sizeof(ACCEL_DRIVER_DIRNAME) + 1];
        snprintf(path, sizeof path, "%s/%s", dir, ACCEL_DRIVER_DIRNAME);
        append_searched(path);
        scan_directory(path);
    }
}

/* A mutex and a flag rather than pthread_once, so that a fork() in the middle of a scan on another
 * thread leaves the child a lock it can take (the atfork handlers hold it across the fork). */
static pthread_mutex_t scan_lock = PTHREAD_MUTEX_INITIALIZER;
static int scanned;

static void lock_scan(void) { pthread_mutex_lock(&scan_lock); }
static void unlock_scan(void) { pthread_mutex_unlock(&scan_lock); }

__attribute__((constructor)) static void watch_forks(void) { pthread_atfork(lock_scan, unlock_scan, unlock_scan); }

static void ensure_scanned(void) {
    lock_scan();
    if (!scanned) {
        scan_drivers();
        scanned = 1;
    }
    unlock_scan();
}

size_t accel_usable_driver_count(void) {
    ensure_scanned();
    return usable_count;
}

const accel_driver_table* accel_usable_driver(size_t index) {
    ensure_scanned();
    return index < usable_count ? usable[index] : NULL;
}

const accel_driver_table* accel_find_driver(const char* scheme, size_t len, accel_status* status) {
    ensure_scanned();
    for (size_t i = 0; i < usable_count; i++)
        if (strlen(usable[i]->scheme) == len && strncmp(usable[i]->scheme, scheme, len) == 0) return usable[i];
    for (size_t i = 0; i < rejected_count; i++) {
        if (strlen(rejected[i].scheme) == len && strncmp(rejected[i].scheme, scheme, len) == 0) {
            *status = accel_fail(rejected[i].status, "%s", rejected[i].why);
            return NULL;
        }
    }
    char found[256] = "";
    for (size_t i = 0; i < usable_count; i++) {
        size_t used = strlen(found);
        snprintf(found + used, sizeof found - used, "%s%s", i ? ", " : "", usable[i]->scheme);
    }
    *status = accel_fail(ACCEL_ERR_NOT_FOUND,
                         "no driver for scheme '%.*s' (drivers found: %s; searched: %s; ACCEL_DRIVER_PATH, a "
                         "colon-separated list of folders and driver files, replaces the default folder when set)",
                         (int)(len > 64 ? 64 : len), scheme, usable_count ? found : "none",
                         searched[0] ? searched : "nothing");
    return NULL;
}

ACCEL_API accel_status accel_driver_count(size_t* out_count) {
    if (!out_count) return accel_fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_driver_count: out_count is NULL");
    *out_count = accel_usable_driver_count();
    return ACCEL_OK;
}

ACCEL_API accel_status accel_driver_name(size_t index, const char** out_name) {
    if (!out_name) return accel_fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_driver_name: out_name is NULL");
    const accel_driver_table* t = accel_usable_driver(index);
    if (!t)
        return accel_fail(ACCEL_ERR_INVALID_ARGUMENT, "accel_driver_name: index %zu out of range (%zu drivers)", index,
                          accel_usable_driver_count());
    *out_name = t->scheme;
    return ACCEL_OK;
}
