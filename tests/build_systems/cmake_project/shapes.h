#ifndef SHAPES_H
#define SHAPES_H
#ifdef __cplusplus
extern "C" {
#endif
long shape_area(const char *kind, long size);
int shape_known(const char *kind);
#ifdef __cplusplus
}
#endif
#endif
