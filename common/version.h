// version.h: the xsa-eval version, written into results and the User-Agent.
#ifndef XSA_COMMON_VERSION_H
#define XSA_COMMON_VERSION_H
#define XSA_EVAL_VERSION "0.1.0"
#endif
