/* fuzz_input.h — what the harnesses share: the input as a file that the
 * readers open by path, without touching the disk (an anonymous memory
 * file, named through /proc/self/fd). */
#ifndef PP_FUZZ_INPUT_H
#define PP_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

/* Holds `size` bytes of `data` in a memory file; its path goes to `path`.
 * Returns the descriptor (close it after the read), or -1. */
static inline int fuzz_input_file(const uint8_t *data, size_t size, char path[64]) {
    int fd = memfd_create("fuzz-input", 0);
    if (fd < 0)
        return -1;
    size_t done = 0;
    while (done < size) {
        ssize_t n = write(fd, data + done, size - done);
        if (n <= 0) {
            close(fd);
            return -1;
        }
        done += (size_t)n;
    }
    snprintf(path, 64, "/proc/self/fd/%d", fd);
    return fd;
}

#endif
