#ifndef FARECHECK_CZXING_H
#define FARECHECK_CZXING_H
/* placeholder: the Symbols work fills this in */
int CZXing_placeholder(void);
#endif
