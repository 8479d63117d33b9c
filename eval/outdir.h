// outdir.h: the files a run writes under --output (and a report under -o): one safe folder
// name per model, run stamps no two runs share, files that appear only whole and never
// replace another run's, and the sweep of what killed runs of this program left behind.
//
// A file is first written as "<final>.pending.<pid>" (file_write_atomic, so itself whole),
// then renamed to <final> without replacing anything (renameat2 RENAME_NOREPLACE): a run's
// samples first, its results file last, so a results file always has its samples.
#ifndef XSA_EVAL_OUTDIR_H
#define XSA_EVAL_OUTDIR_H

#include <stddef.h>

#include "common/error.h"

// The folder name for a checkpoint: the last component of its real path (so "ckpt/.." and
// "ckpt/." name what they point at), with characters outside [A-Za-z0-9._-] as '_', never
// empty, "." or "..", and never starting with '.'.
void outdir_model_name(const char *model_path, char *buf, size_t n);

// "2026-12-01T11-55-49.123456_3fa9c2": UTC time to the microsecond and 24 random bits.
void outdir_stamp(char *buf, size_t n);

// A usable --output folder (created when missing); "" or a path that cannot be a folder is
// exit 2 naming `flag`.
int outdir_prepare_dir(const char *flag, const char *dir, xsa_error *err);
// A usable output file for -o/--verdict: not "", not a folder, in a folder that exists and can
// be written (or, when it exists and is not a regular file, such as a FIFO or /dev/stdout,
// itself writable; "-" is standard output). Exit 2 naming `flag`; checked before any work.
int outdir_check_file(const char *flag, const char *path, xsa_error *err);
// 1 when path lies directly in folder dir (the same folder, however spelled).
int outdir_in_folder(const char *path, const char *dir);
// No two of a command's outputs (NULL: not asked for) are the same file, and none is one of its
// inputs (NULL entries skipped): exit 2 naming both. The inputs are then kept (copied), and
// outdir_write_set refuses, before writing anything, a target that is one of them, such as a
// chart beside a report whose name an input happens to have.
int outdir_check_outputs(int n_out, const char *const *flags, const char *const *outs, int n_in,
                         const char *const *ins, xsa_error *err);

// 1 when a report at `path` is written into what is there rather than renamed into place:
// this process's stdout or stderr, a FIFO, a terminal or another device. Such a report has no
// charts beside it.
int outdir_is_stream(const char *path);
// 1 when a report at path goes to this process's standard output (-, /dev/stdout, or the file
// stdout is redirected to).
int outdir_is_stdout(const char *path);

// "<final>.pending.<pid>" into buf.
int outdir_pending_path(const char *final, char *buf, size_t n, xsa_error *err);
// Renames a pending file to its final name, failing (exit 3) rather than replacing a file.
int outdir_commit(const char *final, xsa_error *err);
// The error of a failed write of `tmp` (a pending or temporary name) restated for the file the
// user knows, `path`: "path: cannot write: <why>". Returns err's code.
int outdir_write_failed(const char *path, const char *tmp, xsa_error *err);
// Removes this process's pending file of `final` (a failed run).
void outdir_discard(const char *final);

// Writes n files that belong together (a report, its charts, its JSON) so that either all of
// them are replaced or none is: each is written whole into a temporary folder beside it
// (".xsa-report.tmp.<pid>", one per target folder, so a rename never crosses filesystems), and
// only then renamed into place. A full disk leaves the old files as they were. A target that
// exists and is not a regular file (a FIFO, /dev/stdout) is written into, after the renames.
// Temporary folders of killed writers (their pid gone) in a target folder are removed first.
int outdir_write_set(int n, const char *const *paths, const char *const *data, const size_t *lens, xsa_error *err);

// 1 when process pid has ended (on this host; a zombie has); 0 for this process, pid <= 0, or a
// live one.
int outdir_pid_gone(long pid);
// What tells process pid from a later one given the same pid: its start time (clock ticks after
// boot, field 22 of /proc/<pid>/stat) and the boot's id, as "<start> <boot id>". 0, or -1 where
// /proc does not say (no such process, another user's hidden by hidepid, no /proc).
int outdir_pid_identity(long pid, char *out, size_t n);

// Removes, in `dir`, the pending and temporary files ("*.pending.<pid>", "*.tmp.<pid>") of
// results_*, samples_*, journal_* (a done mark's), and report folders ".xsa-report.tmp.<pid>" whose process is gone, and
// samples_<task>_<stamp>.jsonl committed by a run killed before its results_<stamp>.json (whose
// pending results file, of a process that is gone, marks them);
// never a file of a live process, never any other name. Returns how many it removed.
int outdir_sweep(const char *dir);

#endif
