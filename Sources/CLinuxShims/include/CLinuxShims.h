#ifndef FARECHECK_CLINUXSHIMS_H
#define FARECHECK_CLINUXSHIMS_H
// Linux ioctl numbers and structs that Swift cannot reach directly (function-like macros).
// Every function is prefixed with the module name and says in a line why it exists.
#include <stddef.h>
#include <stdint.h>
#include <termios.h>
#include <linux/input.h>
#include <linux/hidraw.h>

// --- USB scanners: hidraw, evdev, uevent netlink (ioctl requests are function-like macros, ioctl is variadic).

/// Takes (grab != 0) or releases exclusive access to an evdev node: EVIOCGRAB is an _IOW macro.
/// Returns 0, or -errno.
int CLinuxShims_evdevGrab(int fd, int grab);

/// Copies a hidraw node's report descriptor (HIDIOCGRDESCSIZE then HIDIOCGRDESC, both _IOR macros).
/// Returns the descriptor length (at most capacity), or -errno.
int CLinuxShims_hidrawReportDescriptor(int fd, uint8_t *buffer, uint32_t capacity);

/// Reads a hidraw node's bus type and USB ids (HIDIOCGRAWINFO, an _IOR macro). Returns 0, or -errno.
int CLinuxShims_hidrawInfo(int fd, uint32_t *bustype, uint16_t *vendor, uint16_t *product);

/// Opens a NETLINK_KOBJECT_UEVENT socket bound to the multicast groups given (1 kernel, 2 udev):
/// sockaddr_nl lives in linux/netlink.h, which Swift's Glibc module does not bring in.
/// Returns the descriptor (close-on-exec), or -errno.
int CLinuxShims_ueventSocket(uint32_t groups);

// --- Threads.
#include <errno.h>
#include <sys/prctl.h>

/// Names the calling thread for the system (PR_SET_NAME: `ps -L`, `top`, /proc/.../comm; at most 15 bytes are kept):
/// pthread_setname_np needs _GNU_SOURCE, which Swift's Glibc module is not built with, and prctl is variadic.
/// Returns 0 or -errno.
static inline int CLinuxShims_setThreadName(const char *name) {
    return prctl(PR_SET_NAME, (unsigned long)name, 0UL, 0UL, 0UL) == 0 ? 0 : -errno;
}

// --- Serial scanners: exclusive ttys, pseudo-terminals.
#include <errno.h>
#include <sys/ioctl.h>

/// Takes (1) or releases (0) exclusive use of a tty (TIOCEXCL/TIOCNXCL): ioctl is variadic, Swift cannot call it.
/// Returns 0 or -errno.
static inline int CLinuxShims_setTerminalExclusive(int fd, int exclusive) {
    return ioctl(fd, exclusive ? TIOCEXCL : TIOCNXCL) == 0 ? 0 : -errno;
}

/// Opens the primary side of a new pseudo-terminal (posix_openpt, grantpt, unlockpt) and writes the replica's path
/// (ptsname_r) into `path`; returns the descriptor (close-on-exec) or -errno. glibc declares these only under
/// _XOPEN_SOURCE/_GNU_SOURCE, which Swift's Glibc module does not define.
int CLinuxShims_openPseudoTerminal(char *path, size_t capacity);

// --- Disk writes: pacing a bulk write (the store's sync) so that it never queues much ahead of a verdict's fsync.

/// Starts writeback of the dirty pages of `fd` in [offset, offset + bytes) and waits for it (sync_file_range with
/// SYNC_FILE_RANGE_WAIT_BEFORE | WRITE | WAIT_AFTER): declared only with _GNU_SOURCE, which Swift's Glibc module
/// does not define. Data only, no metadata and no disk cache flush (fdatasync does those). Returns 0 or -errno.
int CLinuxShims_writeBackRange(int fd, int64_t offset, int64_t bytes);

/// The calling thread's I/O priority (ioprio_get(IOPRIO_WHO_PROCESS, 0)): glibc has no wrapper, and syscall is
/// variadic. Returns the priority value, or -errno.
int CLinuxShims_threadIOPriority(void);

/// Sets the calling thread's I/O priority to a value `CLinuxShims_threadIOPriority` returned. Returns 0 or -errno.
int CLinuxShims_setThreadIOPriority(int priority);

/// Puts the calling thread's I/O in the idle class (IOPRIO_CLASS_IDLE): served when no other I/O waits, by a
/// scheduler that honours classes. Returns 0 or -errno.
int CLinuxShims_setThreadIOPriorityIdle(void);

// --- CPU.

/// 1 when the calling thread is in the SCHED_IDLE policy (declared only with _GNU_SOURCE), 0 when not, -errno when it
/// cannot be read.
int CLinuxShims_threadSchedulingIsIdle(void);

#endif
