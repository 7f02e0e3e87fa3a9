// The kind of file system a path is on: statfs(2)'s f_type, which Swift's Glibc does not import (only statvfs,
// which has no type). A server trusts inotify(7) only on file systems whose every change passes through this
// kernel.
#ifdef __linux__
#include "CModelDepotPlatform.h"

#include <sys/vfs.h>

int modeldepot_file_system_magic(const char *path, long *magic) {
    struct statfs info;
    if (statfs(path, &info) != 0) return -1;
    *magic = (long)info.f_type;
    return 0;
}
#else
#include "CModelDepotPlatform.h"

int modeldepot_file_system_magic(const char *path, long *magic) {
    (void)path;
    (void)magic;
    return -1;
}
#endif
