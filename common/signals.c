// signals.c: see signals.h.
#include "common/signals.h"

#include <stddef.h>

void signals_catch(void (*handler)(int), struct sigaction old[2]) {
    static const int sig[2] = {SIGINT, SIGTERM};
    struct sigaction sa = {.sa_handler = handler}, was;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < 2; i++) {
        if (sigaction(sig[i], NULL, &was) != 0) continue;
        if (old) old[i] = was;
        if (was.sa_handler != SIG_IGN) sigaction(sig[i], &sa, NULL);
    }
}

void signals_restore(const struct sigaction old[2]) {
    sigaction(SIGINT, &old[0], NULL);
    sigaction(SIGTERM, &old[1], NULL);
}
