#include "CImageCodecs.h"
int CImageCodecs_placeholder(void) { return 0; }
