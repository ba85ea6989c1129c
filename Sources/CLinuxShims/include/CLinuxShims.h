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

#endif
