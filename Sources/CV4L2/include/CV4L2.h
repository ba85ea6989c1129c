#ifndef FARECHECK_CV4L2_H
#define FARECHECK_CV4L2_H
// The V4L2 calls of the camera source, through libv4l2 (which converts the many camera pixel formats to a few and
// emulates read-less capture for old drivers). This is the one place where farecheck talks to a camera: ioctl is
// variadic and its request numbers are function-like macros, so Swift cannot make these calls itself. Every
// function returns 0 (or a count) on success and -errno on failure, errno read here before anything can change it.
#include <stddef.h>
#include <stdint.h>

/// Opens a video node (read-write, non-blocking, close-on-exec) and hands it to libv4l2 (v4l2_fd_open). Returns
/// the descriptor, -ENOTTY when the node is not a V4L2 device at all, or -errno.
int CV4L2_open(const char *path);

/// Closes a descriptor from CV4L2_open (v4l2_close). Returns 0 or -errno.
int CV4L2_close(int fd);

/// The driver's name for the device (VIDIOC_QUERYCAP card, NUL-terminated into `card`) and whether it can capture
/// video by streaming (V4L2_CAP_VIDEO_CAPTURE and V4L2_CAP_STREAMING, of the device node itself). Returns 0 or -errno.
int CV4L2_capabilities(int fd, char *card, size_t capacity, int *capturesByStreaming);

/// The `index`th capture pixel format (VIDIOC_ENUM_FMT): its four-character code, and whether libv4l2 converts to it
/// from another format (V4L2_FMT_FLAG_EMULATED). Returns 0, or -EINVAL past the last.
int CV4L2_pixelFormat(int fd, uint32_t index, uint32_t *code, int *emulated);

/// The `index`th frame size of a pixel format (VIDIOC_ENUM_FRAMESIZES). A discrete size sets min = max and step 0;
/// a stepwise or continuous range sets min, max and step (continuous: step 1). Returns 0, or -EINVAL past the last.
int CV4L2_frameSize(
    int fd, uint32_t code, uint32_t index, uint32_t *minWidth, uint32_t *maxWidth, uint32_t *stepWidth,
    uint32_t *minHeight, uint32_t *maxHeight, uint32_t *stepHeight);

/// The `index`th frame interval of a format at a size (VIDIOC_ENUM_FRAMEINTERVALS), as a fraction of a second. A
/// range gives its shortest interval (the fastest rate) at index 0 and its longest at index 1.
/// Returns 0, or -EINVAL past the last.
int CV4L2_frameInterval(
    int fd, uint32_t code, uint32_t width, uint32_t height, uint32_t index, uint32_t *numerator,
    uint32_t *denominator);

/// Asks for a capture format (VIDIOC_S_FMT, progressive) and reads back what the driver set: code, size, bytes per
/// row and bytes per frame. Returns 0 or -errno.
int CV4L2_setFormat(
    int fd, uint32_t *code, uint32_t *width, uint32_t *height, uint32_t *bytesPerLine, uint32_t *frameBytes);

/// Asks for a frame interval (VIDIOC_S_PARM; numerator/denominator seconds) and reads back the one set. A driver
/// without frame rate control leaves them as they were. Returns 0 or -errno.
int CV4L2_setFrameInterval(int fd, uint32_t *numerator, uint32_t *denominator);

/// Asks for `count` memory-mapped buffers (VIDIOC_REQBUFS; 0 frees them). Returns the number granted or -errno.
int CV4L2_requestBuffers(int fd, uint32_t count);

/// Maps buffer `index` (VIDIOC_QUERYBUF, v4l2_mmap) into `start`, `length`. Returns 0 or -errno.
int CV4L2_mapBuffer(int fd, uint32_t index, void **start, size_t *length);

/// Unmaps a buffer mapped by CV4L2_mapBuffer (v4l2_munmap). Returns 0 or -errno.
int CV4L2_unmapBuffer(void *start, size_t length);

/// Hands buffer `index` to the driver to fill (VIDIOC_QBUF). Returns 0 or -errno.
int CV4L2_queueBuffer(int fd, uint32_t index);

/// Takes a filled buffer back (VIDIOC_DQBUF): its index, the bytes used, whether the driver flagged it as damaged
/// (V4L2_BUF_FLAG_ERROR) and its sequence number. Returns 0, -EAGAIN when none is ready yet, or -errno.
int CV4L2_dequeueBuffer(int fd, uint32_t *index, uint32_t *bytesUsed, int *damaged, uint32_t *sequence);

/// Starts (on != 0) or stops streaming (VIDIOC_STREAMON/STREAMOFF). Stopping returns every buffer to the
/// application. Returns 0 or -errno.
int CV4L2_stream(int fd, int on);

#endif
