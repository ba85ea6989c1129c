// posix_openpt and ptsname_r are declared only with _GNU_SOURCE; it must come before any system header.
#define _GNU_SOURCE
#include "CLinuxShims.h"

// The size of the kernel's input_event record on this architecture: recorded streams rely on it.
_Static_assert(sizeof(struct input_event) == 24, "input_event is 24 bytes on 64-bit Linux");

// --- USB scanners: hidraw, evdev, uevent netlink.
#include <errno.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>
#include <linux/netlink.h>

// Swift reads hidraw_devinfo's fields through this function only, but the descriptor buffer size is ours.
_Static_assert(sizeof(struct hidraw_devinfo) == 8, "hidraw_devinfo is u32 bustype, s16 vendor, s16 product");
_Static_assert(HID_MAX_DESCRIPTOR_SIZE == 4096, "report descriptors are at most 4096 bytes");

int CLinuxShims_evdevGrab(int fd, int grab) {
    return ioctl(fd, EVIOCGRAB, grab) == 0 ? 0 : -errno;
}

int CLinuxShims_hidrawReportDescriptor(int fd, uint8_t *buffer, uint32_t capacity) {
    int size = 0;
    if (ioctl(fd, HIDIOCGRDESCSIZE, &size) != 0) return -errno;
    struct hidraw_report_descriptor descriptor;
    memset(&descriptor, 0, sizeof descriptor);
    descriptor.size = (uint32_t)size;
    if (descriptor.size > HID_MAX_DESCRIPTOR_SIZE) descriptor.size = HID_MAX_DESCRIPTOR_SIZE;
    if (ioctl(fd, HIDIOCGRDESC, &descriptor) != 0) return -errno;
    uint32_t length = descriptor.size < capacity ? descriptor.size : capacity;
    memcpy(buffer, descriptor.value, length);
    return (int)length;
}

int CLinuxShims_hidrawInfo(int fd, uint32_t *bustype, uint16_t *vendor, uint16_t *product) {
    struct hidraw_devinfo info;
    if (ioctl(fd, HIDIOCGRAWINFO, &info) != 0) return -errno;
    *bustype = info.bustype;
    *vendor = (uint16_t)info.vendor;
    *product = (uint16_t)info.product;
    return 0;
}

int CLinuxShims_ueventSocket(uint32_t groups) {
    int fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC, NETLINK_KOBJECT_UEVENT);
    if (fd < 0) return -errno;
    struct sockaddr_nl address;
    memset(&address, 0, sizeof address);
    address.nl_family = AF_NETLINK;
    address.nl_groups = groups;
    if (bind(fd, (struct sockaddr *)&address, sizeof address) != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

// --- Serial scanners: pseudo-terminals for the simulator and the latency benchmark.
#include <fcntl.h>
#include <stdlib.h>

int CLinuxShims_openPseudoTerminal(char *path, size_t capacity) {
    int fd = posix_openpt(O_RDWR | O_NOCTTY | O_CLOEXEC);
    if (fd < 0) return -errno;
    if (grantpt(fd) != 0 || unlockpt(fd) != 0 || ptsname_r(fd, path, capacity) != 0) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

// --- Disk writes.
#include <fcntl.h>

int CLinuxShims_writeBackRange(int fd, int64_t offset, int64_t bytes) {
    unsigned int flags = SYNC_FILE_RANGE_WAIT_BEFORE | SYNC_FILE_RANGE_WRITE | SYNC_FILE_RANGE_WAIT_AFTER;
    return sync_file_range(fd, (off64_t)offset, (off64_t)bytes, flags) == 0 ? 0 : -errno;
}

#include <sys/syscall.h>
#include <linux/ioprio.h>

int CLinuxShims_threadIOPriority(void) {
    long priority = syscall(SYS_ioprio_get, IOPRIO_WHO_PROCESS, 0);
    return priority >= 0 ? (int)priority : -errno;
}

int CLinuxShims_setThreadIOPriority(int priority) {
    return syscall(SYS_ioprio_set, IOPRIO_WHO_PROCESS, 0, priority) == 0 ? 0 : -errno;
}

int CLinuxShims_setThreadIOPriorityIdle(void) {
    return CLinuxShims_setThreadIOPriority(IOPRIO_PRIO_VALUE(IOPRIO_CLASS_IDLE, 0));
}

#include <sched.h>

int CLinuxShims_threadSchedulingIsIdle(void) {
    int policy = sched_getscheduler((pid_t)syscall(SYS_gettid));
    return policy < 0 ? -errno : (policy & ~SCHED_RESET_ON_FORK) == SCHED_IDLE;
}
