#ifndef FARECHECK_CIMAGECODECS_H
#define FARECHECK_CIMAGECODECS_H
int CImageCodecs_placeholder(void);
#endif
