/* Linking libpipeprof starts no thread: a profiled program's threads stay
 * its own. The cpu backend's OpenBLAS is the serial build (CMakeLists.txt);
 * Debian's pthread build would start a thread pool when the library loads,
 * in every program that records, whether or not it runs a cpu model. */
#include <dirent.h>

#include "pipeprof/device.h"
#include "testutil.h"

static int thread_count(void) {
    DIR *d = opendir("/proc/self/task");
    if (!d)
        pp_test_skip("no /proc/self/task to count this process's threads");
    int n = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL;)
        n += e->d_name[0] != '.';
    closedir(d);
    return n;
}

static void test_only_the_main_thread_runs_at_start(void) {
    EXPECT_EQ_I64(thread_count(), 1);
}

int main(void) {
    RUN(test_only_the_main_thread_runs_at_start);
    /* links the backends, and with the cpu backend OpenBLAS, into this test */
    EXPECT_EQ_I64(pp_device_check("cpu", NULL, NULL), PP_OK);
    return pp_test_finish();
}
