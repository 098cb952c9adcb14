/* report_dir.c — the output directory of `pipeprof report`, written so that
 * it never holds a partial set of files that looks complete.
 *
 * Every file goes into a staging directory: "DIR.tmp-XXXXXX" beside a new
 * DIR, "DIR/.tmp-XXXXXX" inside an existing one (on the same file system
 * either way, so the moves are renames). Only when all are written does
 * commit move them: the staging directory onto DIR when DIR is new (one
 * rename: the directory appears complete), else each file into DIR (each
 * rename replaces one file whole). A failure before commit removes the
 * staging directory and leaves DIR as it was, and so does SIGINT, SIGTERM
 * or SIGHUP (cli_out_dir_remove_pending, from main's handler). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "cli/cli.h"

/* The staging directory being filled now, for a signal handler: set once
 * it exists, emptied before its path is freed. */
static _Atomic(char *) pending_staging;

/* Removes the files of `dir` and then `dir`, with system calls only
 * (async-signal-safe: no opendir, whose buffer is malloc'd). Entries are
 * read again after each pass, since unlinking while reading may skip some. */
static void remove_dir_signal_safe(const char *dir) {
    for (int pass = 0; pass < 8 && rmdir(dir) != 0 && errno == ENOTEMPTY; pass++) {
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
            return;
        char buf[4096] __attribute__((aligned(8)));
        long n;
        while ((n = syscall(SYS_getdents64, fd, buf, sizeof buf)) > 0)
            for (long at = 0; at < n;) {
                /* struct linux_dirent64: ino (8), off (8), reclen (2), type (1), name */
                unsigned short reclen;
                memcpy(&reclen, buf + at + 16, sizeof reclen);
                const char *name = buf + at + 19;
                if (strcmp(name, ".") != 0 && strcmp(name, "..") != 0 &&
                    unlinkat(fd, name, 0) != 0 && errno == EISDIR)
                    unlinkat(fd, name, AT_REMOVEDIR);
                at += reclen;
            }
        close(fd);
    }
}

void cli_out_dir_remove_pending(void) {
    const char *dir = atomic_load(&pending_staging);
    if (dir)
        remove_dir_signal_safe(dir);
}

int cli_out_dir_open(const char *cmd, const char *dir, cli_out_dir *o) {
    *o = (cli_out_dir){.dir = dir};
    struct stat st;
    if (stat(dir, &st) == 0) {
        if (!S_ISDIR(st.st_mode)) {
            cli_error("%s: -o %s: exists and is not a directory", cmd, dir);
            return CLI_BADINPUT;
        }
        o->existed = 1;
    }
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/') /* "out/" stages as "out.tmp-...", beside it */
        n--;
    const char *suffix = o->existed ? "/.tmp-XXXXXX" : ".tmp-XXXXXX";
    size_t len = n + strlen(suffix) + 1;
    o->staging = malloc(len);
    if (!o->staging) {
        cli_error("%s: out of memory", cmd);
        return CLI_FAIL;
    }
    snprintf(o->staging, len, "%.*s%s", (int)n, dir, suffix);
    if (!mkdtemp(o->staging)) {
        cli_error("%s: -o %s: cannot create a directory there: %s", cmd, dir, strerror(errno));
        free(o->staging);
        o->staging = NULL;
        return CLI_FAIL;
    }
    atomic_store(&pending_staging, o->staging);
    /* mkdtemp makes it private (0700); DIR gets the mode mkdir would give it */
    mode_t mask = umask(0);
    umask(mask);
    chmod(o->staging, 0777 & ~mask);
    return CLI_OK;
}

char *cli_out_dir_path(const cli_out_dir *o, const char *name) {
    size_t n = strlen(o->staging) + 1 + strlen(name) + 1;
    char *path = malloc(n);
    if (path)
        snprintf(path, n, "%s/%s", o->staging, name);
    return path;
}

/* Calls fn(staging/name, DIR/name) for each staged file until one fails. */
static int each_file(cli_out_dir *o, int (*fn)(const char *from, const char *to)) {
    DIR *d = opendir(o->staging);
    if (!d)
        return -1;
    int rc = 0;
    for (struct dirent *e; rc == 0 && (e = readdir(d));) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        size_t a = strlen(o->staging) + strlen(e->d_name) + 2;
        size_t b = strlen(o->dir) + strlen(e->d_name) + 2;
        char *from = malloc(a), *to = malloc(b);
        if (!from || !to) {
            rc = -1;
        } else {
            snprintf(from, a, "%s/%s", o->staging, e->d_name);
            snprintf(to, b, "%s/%s", o->dir, e->d_name);
            rc = fn(from, to);
        }
        free(from);
        free(to);
    }
    closedir(d);
    return rc;
}

static int remove_file(const char *from, const char *to) {
    (void)to;
    return unlink(from) == 0 || errno == ENOENT ? 0 : -1;
}

void cli_out_dir_abort(cli_out_dir *o) {
    if (!o->staging)
        return;
    each_file(o, remove_file);
    rmdir(o->staging);
    atomic_store(&pending_staging, NULL);
    free(o->staging);
    o->staging = NULL;
}

int cli_out_dir_commit(const char *cmd, cli_out_dir *o) {
    int rc;
    if (o->existed)
        rc = each_file(o, rename) == 0 && rmdir(o->staging) == 0 ? 0 : -1;
    else
        rc = rename(o->staging, o->dir);
    if (rc != 0) {
        cli_error("%s: -o %s: moving the finished files from %s failed: %s", cmd, o->dir,
                  o->staging, strerror(errno));
        cli_out_dir_abort(o);
        return CLI_FAIL;
    }
    atomic_store(&pending_staging, NULL);
    free(o->staging);
    o->staging = NULL;
    return CLI_OK;
}
