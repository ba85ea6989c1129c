#ifndef FARECHECK_CLINUXSHIMS_H
#define FARECHECK_CLINUXSHIMS_H
// Linux ioctl numbers and structs that Swift cannot reach directly (function-like macros).
// Every function is prefixed with the module name and says in a line why it exists.
#include <stddef.h>
#include <stdint.h>
#include <termios.h>
#include <linux/input.h>
#include <linux/hidraw.h>

#endif
