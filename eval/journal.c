// journal.c: the run journal and the request cache of one model's run (journal.h).
#include "eval/journal.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "common/fileio.h"
#include "common/xalloc.h"
#include "common/vec.h"
#include "eval/outdir.h"

int journal_scopes(const struct model *m, const char *numerics, const char *settings, char model_scope[65],
                   char run_scope[65], xsa_error *err) {
    // The configuration as bytes: a field a later architecture adds is in the scope by itself.
    struct sbuf b = {0};
    sbuf_printf(&b, "xsa-eval model scope 1\nweights %s\nnumerics %s\nconfig ", m->weights_sha256, numerics);
    const unsigned char *cfg = (const unsigned char *)&m->cfg;
    for (size_t i = 0; i < sizeof m->cfg; i++) sbuf_printf(&b, "%02x", cfg[i]);
    int rc = sha256_hex(b.s, b.n, model_scope, err);
    b.n = 0;
    if (!rc) sbuf_printf(&b, "xsa-eval run scope 1\nmodel %s\n%s", model_scope, settings);
    if (!rc) rc = sha256_hex(b.s, b.n, run_scope, err);
    sbuf_free(&b);
    return rc;
}

// What reqstore_open cut from a store's end: less than a record is one torn by a run killed while
// writing it; more is damage, and every record from the damaged one on is scored again.
static void dropped_note(const char *path, long dropped) {
    if (dropped < REQSTORE_RECORD_BYTES)
        fprintf(stderr, "xsa-eval: %s: dropped %ld bytes of a record torn by an interrupted run\n", path, dropped);
    else
        fprintf(stderr, "xsa-eval: %s: dropped %ld bytes from its first damaged record on; the requests they held "
                "are scored again\n", path, dropped);
}

int journal_open(struct run_journal *j, const char *dir, const char *cache_dir, const char model_scope[65],
                 const char run_scope[65], int rank, int resume, int quiet, xsa_error *err) {
    memset(j, 0, sizeof *j);
    j->journal.fd = j->cache.fd = -1;
    char tag[32] = "";
    if (rank > 0) snprintf(tag, sizeof tag, ".rank%d", rank);
    if (snprintf(j->journal_path, sizeof j->journal_path, "%s/journal_%.16s%s.xsaj", dir, run_scope, tag) >=
        (int)sizeof j->journal_path)
        return xsa_fail(err, XSA_EBADINPUT, "%s: output path too long", dir);
    long dropped = 0;  // --no-resume empties the journal once it holds it: a live run's is left to it
    int rc = reqstore_open(&j->journal, j->journal_path, run_scope, resume ? 1 : REQSTORE_FRESH, &dropped, err);
    if (rc < 0) {
        if (!quiet)
            fprintf(stderr, "xsa-eval: %s is in use by a concurrent run of the same command; this run keeps no journal\n",
                    j->journal_path);
        rc = 0;
    } else if (!rc) {
        j->have_journal = 1;
        if (dropped && !quiet) dropped_note(j->journal_path, dropped);
        if (j->journal.n && !quiet)
            fprintf(stderr, "xsa-eval: resuming from %s: %zu distinct requests already scored\n", j->journal_path,
                    j->journal.n);
    }
    if (!rc && cache_dir) {  // (a failure here closes the journal just opened, and removes it while empty)
        char path[4200];
        rc = file_mkdirs(cache_dir, "choose a writable --cache-requests folder", err);
        if (!rc && snprintf(path, sizeof path, "%s/%.32s.xsar", cache_dir, model_scope) >= (int)sizeof path)
            rc = xsa_fail(err, XSA_EBADINPUT, "%s: --cache-requests path too long", cache_dir);
        if (!rc) {
            rc = reqstore_open(&j->cache, path, model_scope, 0, &dropped, err);
            j->have_cache = !rc;
            if (!rc && dropped && !quiet) dropped_note(path, dropped);
        }
    }
    if (rc) journal_close(j, 0);
    return rc;
}

static int done_path(const char *dir, const char run_scope[65], char *out, size_t n) {
    return snprintf(out, n, "%s/journal_%.16s.done", dir, run_scope) >= (int)n ? -1 : 0;
}

// The mark's second line: SHA-256 of the launch (version and command line), so that only a
// rerun of the same command reads the results back.
static int launch_digest(const char *launch, char out[65]) {
    xsa_error e = {0};
    return sha256_hex(launch, strlen(launch), out, &e);
}

int journal_mark_done(const char *dir, const char run_scope[65], const char *launch, const char *results_path,
                      xsa_error *err) {
    char p[4200], line[4300], dig[65];
    const char *base = strrchr(results_path, '/') ? strrchr(results_path, '/') + 1 : results_path;
    if (launch_digest(launch, dig)) return xsa_fail(err, XSA_ERUNTIME, "%s: cannot hash the command line", dir);
    char id[128] = "";  // (none where /proc does not say: the pid alone then)
    if (outdir_pid_identity((long)getpid(), id + 1, sizeof id - 1) == 0) id[0] = ' ';
    int len = snprintf(line, sizeof line, "%s\n%s\n%ld%s\n", base, dig, (long)getpid(), id);
    if (done_path(dir, run_scope, p, sizeof p) || len >= (int)sizeof line)
        return xsa_fail(err, XSA_EBADINPUT, "%s: output path too long", dir);
    return file_write_atomic(p, line, (size_t)len, err);
}

// 1 while the writer of a mark may still run: its pid is a live process, not this one, and,
// where the mark records them (" <start> <boot id>" after the pid), with the writer's start
// time and boot: an unrelated process given the pid later is not the writer. (Pids are this
// host's, or pid namespace's: a writer on another host or container sharing the folder counts as gone.)
static int writer_running(long pid, const char *id) {
    if (pid == (long)getpid() || outdir_pid_gone(pid)) return 0;
    size_t k = strcspn(id, "\n");
    char now[128];
    if (id[0] != ' ' || k < 2) return 1;
    return outdir_pid_identity(pid, now, sizeof now) != 0 || (strlen(now) == k - 1 && !strncmp(now, id + 1, k - 1));
}

int journal_done_results(const char *dir, const char run_scope[65], const char *launch, char *out, size_t n) {
    char p[4200], *text = NULL, dig[65];
    size_t len = 0;
    xsa_error e = {0};
    if (done_path(dir, run_scope, p, sizeof p) || !file_exists(p) || launch_digest(launch, dig) ||
        file_read_all(p, 4096, &text, &len, &e))
        return 0;
    // "<results file name>\n<launch digest>\n<pid>[ <start> <boot id>]\n": only a results file of
    // this folder, by the name run gives it, written by a launch of this very command that is no
    // longer running (a live one, such as the same command started twice at once, is not a
    // stopped launch: its results are its own, and this launch scores its own).
    char *nl = strchr(text, '\n'), *id = NULL;
    int ok = nl && (size_t)(nl - text) > 13 && !strncmp(text, "results_", 8) && !strncmp(nl - 5, ".json", 5) &&
             !memchr(text, '/', (size_t)(nl - text)) && !strncmp(nl + 1, dig, 64) && nl[65] == '\n';
    long pid = ok ? strtol(nl + 66, &id, 10) : 0;
    if (pid > 0 && writer_running(pid, id)) ok = 0;
    if (ok) {
        *nl = '\0';
        ok = snprintf(out, n, "%s/%s", dir, text) < (int)n && file_exists(out);
    }
    free(text);
    return ok;
}

void journal_forget_done(const char *dir, const char run_scope[65]) {
    char p[4200];
    if (!done_path(dir, run_scope, p, sizeof p)) unlink(p);
}

void journal_discard(const char *dir, const char run_scope[65]) {
    char p[4200];
    if (snprintf(p, sizeof p, "%s/journal_%.16s.xsaj", dir, run_scope) >= (int)sizeof p) return;
    int fd = open(p, O_RDWR | O_NOFOLLOW | O_CLOEXEC);
    if (fd >= 0 && flock(fd, LOCK_EX | LOCK_NB) == 0) unlink(p);  // (held: a live run's, which removes it itself)
    if (fd >= 0) close(fd);
    journal_remove_ranks(dir, run_scope);  // (those of a data-parallel run, as run_ranks_model_end)
}

int journal_lookup(struct run_journal *j, const uint8_t key[16], struct sched_result *out) {
    int found = (j->have_journal && reqstore_find(&j->journal, key, out)) ||
                (j->have_cache && reqstore_find(&j->cache, key, out));
    j->reused += found;
    return found;
}

int journal_record(struct run_journal *j, const uint8_t (*keys)[16], const struct sched_result *res, int n,
                   xsa_error *err) {
    int rc = j->have_journal ? reqstore_append(&j->journal, keys, res, n, err) : 0;
    if (!rc && j->have_cache) rc = reqstore_append(&j->cache, keys, res, n, err);
    return rc;
}

void journal_close(struct run_journal *j, int success) {
    if (j->have_journal) {
        int empty = j->journal.n == 0;
        reqstore_close(&j->journal);
        if (success || empty) unlink(j->journal_path);
    }
    if (j->have_cache) reqstore_close(&j->cache);
    j->have_journal = j->have_cache = 0;
}

int journal_remove_ranks(const char *dir, const char run_scope[65]) {
    char prefix[64];
    snprintf(prefix, sizeof prefix, "journal_%.16s.rank", run_scope);
    size_t np = strlen(prefix);
    DIR *d = opendir(dir);
    int n = 0;
    struct dirent *de;
    while (d && (de = readdir(d))) {
        const char *name = de->d_name, *end = name + np;
        if (strncmp(name, prefix, np) || !*end) continue;
        while (*end >= '0' && *end <= '9') end++;
        char p[4200];
        if (end == name + np || strcmp(end, ".xsaj") || snprintf(p, sizeof p, "%s/%s", dir, name) >= (int)sizeof p)
            continue;
        n += unlink(p) == 0;
    }
    if (d) closedir(d);
    return n;
}
