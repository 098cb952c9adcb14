/* nvtx_hostile — an NVTX program (no libpipeprof) that misuses NVTX or
 * forks at bad moments, for tests/inject/test_nvtx_hostile.sh and the fault
 * suite (tests/cli/test_faults.sh):
 *
 *   nvtx_hostile bad-handle   names events with string handles NVTX never
 *                             returned (an address, a made-up number) and
 *                             one it did ("good"), then exits 0
 *   nvtx_hostile fork N       forks N times while a thread registers
 *                             strings, creates domains and names categories
 *                             (the injection's naming lock); each child does
 *                             the same once and exits; prints "N forks: H hung"
 *
 * A child that hangs is ended by its own alarm (5 s) and counted hung; the
 * program exits 1 when any hung or failed. */
#include <nvtx3/nvToolsExt.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static nvtxEventAttributes_t registered(nvtxStringHandle_t h) {
    nvtxEventAttributes_t a;
    memset(&a, 0, sizeof a);
    a.version = NVTX_VERSION;
    a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
    a.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
    a.message.registered = h;
    return a;
}

static int bad_handle(void) {
    nvtxDomainHandle_t d = nvtxDomainCreateA("hostile");
    nvtxEventAttributes_t a = registered(nvtxDomainRegisterStringA(d, "good"));
    nvtxDomainRangePushEx(d, &a);
    nvtxDomainRangePop(d);
    uint64_t garbage[4] = {0x4141414141414141ull, 0x4242424242424242ull, 0, 0};
    nvtxStringHandle_t made_up[] = {(nvtxStringHandle_t)(uintptr_t)0xdeadbeef0ull,
                                    (nvtxStringHandle_t)garbage};
    for (size_t i = 0; i < sizeof made_up / sizeof made_up[0]; i++) {
        a = registered(made_up[i]);
        nvtxDomainRangePushEx(d, &a);
        nvtxDomainRangePop(d);
    }
    a = registered(made_up[0]);
    nvtxDomainMarkEx(d, &a);
    return 0;
}

/* Everything that takes the injection's naming lock, once. */
static void name_things(unsigned i) {
    char text[64];
    snprintf(text, sizeof text, "name %u", i);
    nvtxDomainHandle_t d = nvtxDomainCreateA(text);
    nvtxDomainNameCategoryA(d, i % 32 + 1, text);
    nvtxEventAttributes_t a = registered(nvtxDomainRegisterStringA(d, text));
    nvtxDomainRangePushEx(d, &a);
    nvtxDomainRangePop(d);
}

static atomic_int stop;

/* Holds the naming lock much of the time: a domain whose category table is
 * full is scanned whole, under the lock, on every naming of a new category. */
static void *keep_naming(void *arg) {
    (void)arg;
    nvtxDomainHandle_t d = nvtxDomainCreateA("busy");
    for (uint32_t c = 1; c <= 256; c++)
        nvtxDomainNameCategoryA(d, c, "category");
    for (unsigned i = 0; !atomic_load(&stop); i++) {
        nvtxDomainNameCategoryA(d, 1000 + i, "category");
        if (i % 64 == 0)
            name_things(i % 256); /* the same names again: domains are kept */
    }
    return NULL;
}

/* Forks once; the child runs `child` under an alarm. 1 when it hung. */
static int fork_once(void (*child)(void), int *failed) {
    pid_t pid = fork();
    if (pid == 0) {
        alarm(5);
        child();
        _exit(0);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) != pid) {
        ++*failed;
        return 0;
    }
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        return 1;
    *failed += !WIFEXITED(status) || WEXITSTATUS(status) != 0;
    return 0;
}

static void child_names(void) {
    name_things(1000);
}

int main(int argc, char **argv) {
    if (argc == 2 && strcmp(argv[1], "bad-handle") == 0)
        return bad_handle();
    int hung = 0, failed = 0, forks = 0;
    pthread_t th;
    if (argc == 3 && strcmp(argv[1], "fork") == 0) {
        forks = atoi(argv[2]);
        name_things(0); /* NVTX initialized before the races begin */
        pthread_create(&th, NULL, keep_naming, NULL);
        for (int k = 0; k < forks; k++)
            hung += fork_once(child_names, &failed);
    } else {
        fprintf(stderr, "usage: nvtx_hostile bad-handle | fork N\n");
        return 2;
    }
    atomic_store(&stop, 1);
    pthread_join(th, NULL);
    printf("%d forks: %d hung, %d failed\n", forks, hung, failed);
    return hung || failed;
}
