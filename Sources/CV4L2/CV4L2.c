#include "CV4L2.h"

#include <errno.h>
#include <fcntl.h>
#include <libv4l2.h>
#include <linux/videodev2.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

// One ioctl through libv4l2; -errno on failure.
static int call(int fd, unsigned long request, void *argument) {
    return v4l2_ioctl(fd, request, argument) == -1 ? -errno : 0;
}

int CV4L2_open(const char *path) {
    int fd = open(path, O_RDWR | O_NONBLOCK | O_CLOEXEC);
    if (fd == -1) return -errno;
    // Asked first without libv4l2, which would print its own complaint about anything that is not a video device.
    struct v4l2_capability capability;
    memset(&capability, 0, sizeof capability);
    if (ioctl(fd, VIDIOC_QUERYCAP, &capability) == -1) {
        int error = errno;
        close(fd);
        return error == EINVAL ? -ENOTTY : -error;
    }
    if (v4l2_fd_open(fd, 0) == -1) {
        int error = errno;
        close(fd);
        return -error;
    }
    return fd;
}

int CV4L2_close(int fd) { return v4l2_close(fd) == -1 ? -errno : 0; }

int CV4L2_capabilities(int fd, char *card, size_t capacity, int *capturesByStreaming) {
    struct v4l2_capability capability;
    memset(&capability, 0, sizeof capability);
    int result = call(fd, VIDIOC_QUERYCAP, &capability);
    if (result != 0) return result;
    if (capacity > 0) {
        size_t length = strnlen((const char *)capability.card, sizeof capability.card);
        if (length >= capacity) length = capacity - 1;
        memcpy(card, capability.card, length);
        card[length] = 0;
    }
    uint32_t caps = (capability.capabilities & V4L2_CAP_DEVICE_CAPS) ? capability.device_caps
                                                                      : capability.capabilities;
    *capturesByStreaming = (caps & V4L2_CAP_VIDEO_CAPTURE) && (caps & V4L2_CAP_STREAMING);
    return 0;
}

int CV4L2_pixelFormat(int fd, uint32_t index, uint32_t *code, int *emulated) {
    struct v4l2_fmtdesc description;
    memset(&description, 0, sizeof description);
    description.index = index;
    description.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    int result = call(fd, VIDIOC_ENUM_FMT, &description);
    if (result != 0) return result;
    *code = description.pixelformat;
    *emulated = (description.flags & V4L2_FMT_FLAG_EMULATED) != 0;
    return 0;
}

int CV4L2_frameSize(
    int fd, uint32_t code, uint32_t index, uint32_t *minWidth, uint32_t *maxWidth, uint32_t *stepWidth,
    uint32_t *minHeight, uint32_t *maxHeight, uint32_t *stepHeight) {
    struct v4l2_frmsizeenum size;
    memset(&size, 0, sizeof size);
    size.index = index;
    size.pixel_format = code;
    int result = call(fd, VIDIOC_ENUM_FRAMESIZES, &size);
    if (result != 0) return result;
    if (size.type == V4L2_FRMSIZE_TYPE_DISCRETE) {
        *minWidth = *maxWidth = size.discrete.width;
        *minHeight = *maxHeight = size.discrete.height;
        *stepWidth = *stepHeight = 0;
    } else {
        *minWidth = size.stepwise.min_width;
        *maxWidth = size.stepwise.max_width;
        *minHeight = size.stepwise.min_height;
        *maxHeight = size.stepwise.max_height;
        int continuous = size.type == V4L2_FRMSIZE_TYPE_CONTINUOUS;
        *stepWidth = continuous || size.stepwise.step_width == 0 ? 1 : size.stepwise.step_width;
        *stepHeight = continuous || size.stepwise.step_height == 0 ? 1 : size.stepwise.step_height;
    }
    return 0;
}

int CV4L2_frameInterval(
    int fd, uint32_t code, uint32_t width, uint32_t height, uint32_t index, uint32_t *numerator,
    uint32_t *denominator) {
    struct v4l2_frmivalenum interval;
    memset(&interval, 0, sizeof interval);
    // A range is one entry (index 0) in V4L2; it is offered here as two: its fastest and its slowest rate.
    interval.index = index == 1 ? 0 : index;
    interval.pixel_format = code;
    interval.width = width;
    interval.height = height;
    int result = call(fd, VIDIOC_ENUM_FRAMEINTERVALS, &interval);
    if (result != 0) return result;
    if (interval.type == V4L2_FRMIVAL_TYPE_DISCRETE) {
        if (index == 1) {
            // Index 1 of a discrete list is its own entry.
            interval.index = 1;
            result = call(fd, VIDIOC_ENUM_FRAMEINTERVALS, &interval);
            if (result != 0) return result;
        }
        *numerator = interval.discrete.numerator;
        *denominator = interval.discrete.denominator;
        return 0;
    }
    if (index > 1) return -EINVAL;
    struct v4l2_fract bound = index == 0 ? interval.stepwise.min : interval.stepwise.max;
    *numerator = bound.numerator;
    *denominator = bound.denominator;
    return 0;
}

int CV4L2_setFormat(
    int fd, uint32_t *code, uint32_t *width, uint32_t *height, uint32_t *bytesPerLine, uint32_t *frameBytes) {
    struct v4l2_format format;
    memset(&format, 0, sizeof format);
    format.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    format.fmt.pix.pixelformat = *code;
    format.fmt.pix.width = *width;
    format.fmt.pix.height = *height;
    format.fmt.pix.field = V4L2_FIELD_NONE;
    int result = call(fd, VIDIOC_S_FMT, &format);
    if (result != 0) return result;
    *code = format.fmt.pix.pixelformat;
    *width = format.fmt.pix.width;
    *height = format.fmt.pix.height;
    *bytesPerLine = format.fmt.pix.bytesperline;
    *frameBytes = format.fmt.pix.sizeimage;
    return 0;
}

int CV4L2_setFrameInterval(int fd, uint32_t *numerator, uint32_t *denominator) {
    struct v4l2_streamparm parameters;
    memset(&parameters, 0, sizeof parameters);
    parameters.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    int result = call(fd, VIDIOC_G_PARM, &parameters);
    if (result != 0) return result;
    if (!(parameters.parm.capture.capability & V4L2_CAP_TIMEPERFRAME)) return 0;
    parameters.parm.capture.timeperframe.numerator = *numerator;
    parameters.parm.capture.timeperframe.denominator = *denominator;
    result = call(fd, VIDIOC_S_PARM, &parameters);
    if (result != 0) return result;
    *numerator = parameters.parm.capture.timeperframe.numerator;
    *denominator = parameters.parm.capture.timeperframe.denominator;
    return 0;
}

int CV4L2_requestBuffers(int fd, uint32_t count) {
    struct v4l2_requestbuffers request;
    memset(&request, 0, sizeof request);
    request.count = count;
    request.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    request.memory = V4L2_MEMORY_MMAP;
    int result = call(fd, VIDIOC_REQBUFS, &request);
    return result != 0 ? result : (int)request.count;
}

int CV4L2_mapBuffer(int fd, uint32_t index, void **start, size_t *length) {
    struct v4l2_buffer buffer;
    memset(&buffer, 0, sizeof buffer);
    buffer.index = index;
    buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    buffer.memory = V4L2_MEMORY_MMAP;
    int result = call(fd, VIDIOC_QUERYBUF, &buffer);
    if (result != 0) return result;
    void *mapped = v4l2_mmap(NULL, buffer.length, PROT_READ | PROT_WRITE, MAP_SHARED, fd, buffer.m.offset);
    if (mapped == MAP_FAILED) return -errno;
    *start = mapped;
    *length = buffer.length;
    return 0;
}

int CV4L2_unmapBuffer(void *start, size_t length) { return v4l2_munmap(start, length) == -1 ? -errno : 0; }

int CV4L2_queueBuffer(int fd, uint32_t index) {
    struct v4l2_buffer buffer;
    memset(&buffer, 0, sizeof buffer);
    buffer.index = index;
    buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    buffer.memory = V4L2_MEMORY_MMAP;
    return call(fd, VIDIOC_QBUF, &buffer);
}

int CV4L2_dequeueBuffer(int fd, uint32_t *index, uint32_t *bytesUsed, int *damaged, uint32_t *sequence) {
    struct v4l2_buffer buffer;
    memset(&buffer, 0, sizeof buffer);
    buffer.type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    buffer.memory = V4L2_MEMORY_MMAP;
    int result = call(fd, VIDIOC_DQBUF, &buffer);
    if (result != 0) return result;
    *index = buffer.index;
    *bytesUsed = buffer.bytesused;
    *damaged = (buffer.flags & V4L2_BUF_FLAG_ERROR) != 0;
    *sequence = buffer.sequence;
    return 0;
}

int CV4L2_stream(int fd, int on) {
    int type = V4L2_BUF_TYPE_VIDEO_CAPTURE;
    return call(fd, on ? VIDIOC_STREAMON : VIDIOC_STREAMOFF, &type);
}
