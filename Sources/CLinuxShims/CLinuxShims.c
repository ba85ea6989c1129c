#include "CLinuxShims.h"

// The size of the kernel's input_event record on this architecture: recorded streams rely on it.
_Static_assert(sizeof(struct input_event) == 24, "input_event is 24 bytes on 64-bit Linux");
