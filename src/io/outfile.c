#include "io/outfile.h"

#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define OUTFILE_BUFFER (1 << 20)

void pp_xfsz_block(sigset_t *saved) {
    sigset_t xfsz;
    sigemptyset(&xfsz);
    sigaddset(&xfsz, SIGXFSZ);
    pthread_sigmask(SIG_BLOCK, &xfsz, saved);
}

void pp_xfsz_restore(const sigset_t *saved) {
    if (!sigismember(saved, SIGXFSZ)) {
        sigset_t xfsz;
        sigemptyset(&xfsz);
        sigaddset(&xfsz, SIGXFSZ);
        const struct timespec now = {0, 0};
        while (sigtimedwait(&xfsz, NULL, &now) == SIGXFSZ) {
        }
    }
    pthread_sigmask(SIG_SETMASK, saved, NULL);
}

/* The temporary files being written now, for pp_outfile_remove_pending
 * (a signal handler): a slot is filled before the file is created and
 * emptied before its path is freed. */
#define PENDING_MAX 16
static _Atomic(char *) pending[PENDING_MAX];

static void pending_set(const char *from, char *to) {
    for (int i = 0; i < PENDING_MAX; i++) {
        char *expected = (char *)from;
        if (atomic_compare_exchange_strong(&pending[i], &expected, to))
            return;
    }
}

void pp_outfile_remove_pending(void) {
    for (int i = 0; i < PENDING_MAX; i++) {
        char *path = atomic_load(&pending[i]);
        if (path)
            unlink(path);
    }
}

static void outfile_release(pp_outfile *o) {
    sigset_t saved = o->saved_mask;
    int masked = o->masked;
    if (o->tmp_path)
        pending_set(o->tmp_path, NULL);
    free(o->path);
    free(o->tmp_path);
    free(o->buf);
    memset(o, 0, sizeof *o);
    if (masked)
        pp_xfsz_restore(&saved);
}

int pp_outfile_open(pp_outfile *o, const char *path, pp_error *err) {
    memset(o, 0, sizeof *o);
    pp_xfsz_block(&o->saved_mask);
    o->masked = 1;
    size_t n = strlen(path) + 32;
    o->path = strdup(path);
    o->tmp_path = malloc(n);
    o->buf = malloc(OUTFILE_BUFFER);
    if (!o->path || !o->tmp_path || !o->buf) {
        outfile_release(o);
        return pp_set_error(err, PP_ENOMEM, "%s: out of memory", path);
    }
    snprintf(o->tmp_path, n, "%s.tmp.%ld", path, (long)getpid());
    pending_set(NULL, o->tmp_path);
    o->f = fopen(o->tmp_path, "wb");
    if (!o->f) {
        int e = errno;
        pp_set_error(err, PP_EIO, "%s: cannot write: %s", path, strerror(e));
        outfile_release(o);
        return PP_EIO;
    }
    setvbuf(o->f, o->buf, _IOFBF, OUTFILE_BUFFER);
    return PP_OK;
}

void pp_outfile_write(pp_outfile *o, const void *data, size_t len) {
    if (!o->failed && len && fwrite(data, 1, len, o->f) != len)
        o->failed = errno ? errno : EIO;
}

int pp_outfile_commit(pp_outfile *o, pp_error *err) {
    int e = o->failed;
    if (fflush(o->f) != 0 && !e)
        e = errno;
    if (fclose(o->f) != 0 && !e)
        e = errno;
    o->f = NULL;
    if (!e && rename(o->tmp_path, o->path) != 0)
        e = errno;
    if (e) {
        remove(o->tmp_path);
        pp_set_error(err, PP_EIO, "%s: write failed: %s", o->path, strerror(e));
        outfile_release(o);
        return PP_EIO;
    }
    outfile_release(o);
    return PP_OK;
}

void pp_outfile_abort(pp_outfile *o) {
    if (o->f)
        fclose(o->f);
    if (o->tmp_path)
        remove(o->tmp_path);
    outfile_release(o);
}

int pp_outfile_write_file(const char *path, const void *data, size_t len, pp_error *err) {
    pp_outfile o;
    int rc = pp_outfile_open(&o, path, err);
    if (rc != PP_OK)
        return rc;
    pp_outfile_write(&o, data, len);
    return pp_outfile_commit(&o, err);
}
