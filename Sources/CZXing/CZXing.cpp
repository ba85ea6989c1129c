#include "CZXing.h"
int CZXing_placeholder(void) { return 0; }
