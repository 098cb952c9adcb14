/* itt_hostile — forks while another thread creates ITT domains and string
 * handles through the collector (INTEL_LIBITTNOTIFY64, as the ITT static
 * part would load it), for tests/inject/test_itt_hostile.sh and the fault
 * suite (tests/cli/test_faults.sh). No libpipeprof, no static part: the
 * collector's create calls are what takes its lock.
 *
 *   itt_hostile fork N   N forks while a thread creates 2000 domains and then
 *                        creates them again and again; each child creates a
 *                        domain and a string handle and exits; prints
 *                        "N forks: H hung, F failed"
 *
 * A child that hangs is ended by its own alarm (5 s) and counted hung; the
 * program exits 1 when any hung or failed. */
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef void *(*create_fn)(const char *);
static create_fn domain_create, handle_create;
static atomic_int stop;

#define DOMAINS 2000

static void *keep_creating(void *arg) {
    (void)arg;
    char name[32];
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        snprintf(name, sizeof name, "domain %u", i % DOMAINS);
        domain_create(name);
        handle_create(name);
    }
    return NULL;
}

int main(int argc, char **argv) {
    if (argc != 3 || strcmp(argv[1], "fork") != 0) {
        fprintf(stderr, "usage: itt_hostile fork N\n");
        return 2;
    }
    const char *path = getenv("INTEL_LIBITTNOTIFY64");
    void *lib = path ? dlopen(path, RTLD_NOW) : NULL;
    domain_create = lib ? (create_fn)(uintptr_t)dlsym(lib, "__itt_domain_create") : NULL;
    handle_create = lib ? (create_fn)(uintptr_t)dlsym(lib, "__itt_string_handle_create") : NULL;
    if (!domain_create || !handle_create) {
        fprintf(stderr, "itt_hostile: no collector in INTEL_LIBITTNOTIFY64 (%s)\n", path ? path : "unset");
        return 1;
    }
    int forks = atoi(argv[2]), hung = 0, failed = 0;
    pthread_t th;
    pthread_create(&th, NULL, keep_creating, NULL);
    for (int k = 0; k < forks; k++) {
        pid_t pid = fork();
        if (pid == 0) {
            alarm(5);
            _exit(domain_create("child") && handle_create("child") ? 0 : 3);
        }
        int status = 0;
        if (pid < 0 || waitpid(pid, &status, 0) != pid)
            failed++;
        else if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
            hung++;
        else
            failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    }
    atomic_store(&stop, 1);
    pthread_join(th, NULL);
    printf("%d forks: %d hung, %d failed\n", forks, hung, failed);
    return hung || failed;
}
