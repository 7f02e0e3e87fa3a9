// The few platform calls Swift cannot make: `prctl(2)` is variadic, which Swift does not import, the steps a
// child takes between `fork` and `exec` must be async-signal-safe C (no allocation, no Swift runtime), and
// `statfs(2)` is not imported on Linux.
#ifndef C_MODELDEPOT_PLATFORM_H
#define C_MODELDEPOT_PLATFORM_H

#include <sys/types.h>

/// Put the child in a process group of its own (its id is the child's pid).
#define MODELDEPOT_SPAWN_NEW_GROUP 1
/// Linux: the child gets SIGTERM when its parent ends (`PR_SET_PDEATHSIG`), and does not start if the parent has
/// already ended. Ignored elsewhere.
#define MODELDEPOT_SPAWN_DIES_WITH_PARENT 2

/// Linux only: starts `path` with `argv` and `envp` (NULL-terminated), stdin from /dev/null, stdout and stderr to
/// `output` (created or truncated, 0644), no other descriptor, an empty signal mask and default signal handlers, and
/// `flags`.
///
/// Returns 0 and sets `*pid` once the program has been exec'd, or an errno value: fork's, or the one the child
/// failed with before or at `execve` (the child then never ran the program and has been reaped).
int modeldepot_spawn(const char *path, char *const argv[], char *const envp[], const char *output, int flags,
                     pid_t *pid);

/// Linux only: the calling thread's id (`gettid(2)`, which Swift's Glibc does not import), for per-thread
/// priorities. 0 elsewhere.
pid_t modeldepot_thread_id(void);

/// Linux only: the type of the file system `path` is on (`statfs(2)`'s `f_type`, a magic number of
/// `<linux/magic.h>`) in `*magic`; 0 on success, -1 (errno set) otherwise, and always -1 elsewhere.
int modeldepot_file_system_magic(const char *path, long *magic);

#endif
