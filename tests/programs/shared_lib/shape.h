/* shape.h — interface of libshape.so.  */
#ifndef SHARED_LIB_SHAPE_H_
#define SHARED_LIB_SHAPE_H_
long shape_area(int kind, int a, int b);
int shape_calls(void);
#endif
