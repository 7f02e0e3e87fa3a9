// Why fork and exec by hand instead of posix_spawn: posix_spawn has no attribute for a parent-death signal, and
// `prctl(PR_SET_PDEATHSIG)` must be called in the child, after fork and before exec. This is the only way a child
// of a `kill -9`ed ModelDepot stops with it on Linux (see the README's design notes); Darwin has no such signal
// and ChildProcess keeps posix_spawn there.
//
// Why a thread of its own: the kernel sends the parent-death signal when the *thread* that forked the child ends,
// not the process. Swift's cooperative pool and Dispatch end idle worker threads, which would kill a runtime
// minutes after it started. Every fork happens on one thread that this file starts and never ends, so the signal
// comes when the process ends, and only then.
#ifdef __linux__
#define _GNU_SOURCE
#include "CModelDepotPlatform.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef CLOSE_RANGE_CLOEXEC
#define CLOSE_RANGE_CLOEXEC (1U << 2)
#endif

struct spawn_request {
    const char *path;
    char *const *argv;
    char *const *envp;
    const char *output;
    int flags;
    pid_t pid;
    int result;
    int done;
};

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t changed = PTHREAD_COND_INITIALIZER;
static struct spawn_request *pending = NULL;
static pthread_once_t started = PTHREAD_ONCE_INIT;
static int start_error = 0;

// Marks every descriptor above the standard three close-on-exec: the process may hold descriptors opened without
// it (a library's socket, a pipe of another child), and a runtime, or a browser that outlives ModelDepot, would keep
// them (a listening port, a lock) for as long as it runs. Close-on-exec rather than closed, so that `report` works
// until the exec. close_range(2) where the kernel has it (5.11); else each descriptor below the limit in turn.
static void close_above_standard_on_exec(void) {
#ifdef SYS_close_range
    if (syscall(SYS_close_range, 3U, ~0U, CLOSE_RANGE_CLOEXEC) == 0) return;
#endif
    struct rlimit limit;
    long highest = 65536;
    if (getrlimit(RLIMIT_NOFILE, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY && limit.rlim_cur < 65536)
        highest = (long)limit.rlim_cur;
    for (int descriptor = 3; descriptor < highest; descriptor++) {
        int flags = fcntl(descriptor, F_GETFD);
        if (flags >= 0 && !(flags & FD_CLOEXEC)) fcntl(descriptor, F_SETFD, flags | FD_CLOEXEC);
    }
}

// The child's half: only async-signal-safe calls (the parent may have had other threads holding locks at fork).
// Any failure is written to `report` (close-on-exec, so a successful exec closes it with nothing written).
static void run_child(const struct spawn_request *request, pid_t parent, int report) {
    int error = 0, input = -1, output = -1;
    struct sigaction defaults;
    memset(&defaults, 0, sizeof defaults);
    defaults.sa_handler = SIG_DFL;
    // Ignored signals stay ignored across exec (Swift programs ignore SIGPIPE); a runtime needs the defaults.
    // sigaction fails for SIGKILL, SIGSTOP and the C library's own real-time signals: nothing to reset there.
    for (int number = 1; number < NSIG; number++) sigaction(number, &defaults, NULL);
    sigset_t empty;
    sigemptyset(&empty);
    // Swift's threads block most signals and a child inherits the forking thread's mask: a runtime started with
    // it would ignore SIGTERM.
    sigprocmask(SIG_SETMASK, &empty, NULL);
    if ((request->flags & MODELDEPOT_SPAWN_NEW_GROUP) && setpgid(0, 0) != 0) goto failed;
    if (request->flags & MODELDEPOT_SPAWN_DIES_WITH_PARENT) {
        if (prctl(PR_SET_PDEATHSIG, SIGTERM, 0, 0, 0) != 0) goto failed;
        // The parent may have died between fork and prctl: then no signal will ever come, and the child (already
        // re-parented) must not start a runtime nobody will stop.
        if (getppid() != parent) {
            errno = ESRCH;
            goto failed;
        }
    }
    close_above_standard_on_exec();
    input = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (input < 0 || dup2(input, 0) < 0) goto failed;
    output = open(request->output, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (output < 0 || dup2(output, 1) < 0 || dup2(output, 2) < 0) goto failed;
    execve(request->path, request->argv, request->envp);
failed:
    error = errno;
    while (write(report, &error, sizeof error) < 0 && errno == EINTR) {}
    _exit(127);
}

// The parent's half, on the spawning thread.
static int spawn_here(struct spawn_request *request) {
    int report[2];
    if (pipe2(report, O_CLOEXEC) != 0) return errno;
    pid_t parent = getpid();
    pid_t child = fork();
    if (child == 0) run_child(request, parent, report[1]);
    int error = child < 0 ? errno : 0;
    close(report[1]);
    if (child > 0) {
        int childError = 0;
        ssize_t count;
        do count = read(report[0], &childError, sizeof childError);
        while (count < 0 && errno == EINTR);
        if (count == (ssize_t)sizeof childError) {
            // It never ran the program: reap it here, the caller gets no pid.
            while (waitpid(child, NULL, 0) < 0 && errno == EINTR) {}
            error = childError != 0 ? childError : ECHILD;
        } else {
            request->pid = child;
        }
    }
    close(report[0]);
    return error;
}

static void *spawner(void *unused) {
    (void)unused;
    pthread_mutex_lock(&lock);
    for (;;) {
        while (pending == NULL) pthread_cond_wait(&changed, &lock);
        struct spawn_request *request = pending;
        pending = NULL;
        pthread_mutex_unlock(&lock);
        int result = spawn_here(request);
        pthread_mutex_lock(&lock);
        request->result = result;
        request->done = 1;
        pthread_cond_broadcast(&changed);
    }
    return NULL;
}

static void start_spawner(void) {
    pthread_t thread;
    // Signals are handled elsewhere; this thread only forks.
    sigset_t all, previous;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &previous);
    start_error = pthread_create(&thread, NULL, spawner, NULL);
    pthread_sigmask(SIG_SETMASK, &previous, NULL);
    if (start_error == 0) pthread_detach(thread);
}

int modeldepot_spawn(const char *path, char *const argv[], char *const envp[], const char *output, int flags,
                     pid_t *pid) {
    pthread_once(&started, start_spawner);
    if (start_error != 0) return start_error;
    struct spawn_request request = {path, argv, envp, output, flags, 0, 0, 0};
    pthread_mutex_lock(&lock);
    // One request at a time: wait for the slot, hand the request over, wait for its answer.
    while (pending != NULL) pthread_cond_wait(&changed, &lock);
    pending = &request;
    pthread_cond_broadcast(&changed);
    while (!request.done) pthread_cond_wait(&changed, &lock);
    pthread_mutex_unlock(&lock);
    if (request.result == 0) *pid = request.pid;
    return request.result;
}
#endif
