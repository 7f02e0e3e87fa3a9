// The calling thread's id: gettid(2) is not imported into Swift, and a thread's nice value is set by its id.
#ifdef __linux__
#define _GNU_SOURCE
#include "CModelDepotPlatform.h"

#include <sys/syscall.h>
#include <unistd.h>

pid_t modeldepot_thread_id(void) { return (pid_t)syscall(SYS_gettid); }
#else
#include "CModelDepotPlatform.h"

pid_t modeldepot_thread_id(void) { return 0; }
#endif
