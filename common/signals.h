// signals.h: catching SIGINT and SIGTERM the way every stage of xsa-eval does.
#ifndef XSA_COMMON_SIGNALS_H
#define XSA_COMMON_SIGNALS_H

#include <signal.h>

// Installs `handler` (no SA_RESTART, empty mask) for SIGINT and SIGTERM, except for a signal
// that is ignored now: a signal ignored at start stays ignored (a shell's background job ignores
// SIGINT). The dispositions before go to old[0] (SIGINT) and old[1] (SIGTERM) when old is not
// NULL; signals_restore puts them back.
void signals_catch(void (*handler)(int), struct sigaction old[2]);
void signals_restore(const struct sigaction old[2]);

#endif
